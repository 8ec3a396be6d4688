package io.distlock.lockctl.conformance;

import io.distlock.kit.LockerConformanceTests;
import io.distlock.kit.MultiProcessSupport;

/**
 * The whole conformance kit against the URI given to {@code lockctl conformance}, through the system property {@value
 * #URI_PROPERTY}. Not meant to be found by a build's test scan: its name does not end in {@code Test}.
 */
public class UriConformanceTests extends LockerConformanceTests {

    /** The system property holding the URI under test. */
    public static final String URI_PROPERTY = "lockctl.conformance.uri";

    /** For the JUnit Platform. */
    public UriConformanceTests() {}

    @Override
    public String lockerUri() {
        String uri = System.getProperty(URI_PROPERTY);
        if (uri == null) {
            throw new IllegalStateException("No URI under test: set -D" + URI_PROPERTY);
        }
        return uri;
    }

    /** Worker JVMs open the same URI, except for {@code memory:}, whose locks live inside one JVM. */
    @Override
    public MultiProcessSupport multiProcessSupport() {
        String uri = lockerUri();
        if (uri.trim().toLowerCase(java.util.Locale.ROOT).startsWith("memory:")) {
            return MultiProcessSupport.unsupported(
                    "memory: locks only within one JVM; other processes cannot reach it");
        }
        return MultiProcessSupport.uri(uri);
    }
}

package io.distlock.lockctl;

import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * The logging of a process lockctl runs (its own, a bench worker's): the libraries that log through {@code
 * java.util.logging} (gRPC, under the etcd client, says at INFO whether epoll is available) go through SLF4J, at the
 * levels of {@code simplelogger.properties}, instead of to the console handler, which prints INFO on stderr.
 */
public final class ProcessLogging {

    private ProcessLogging() {}

    /** Routes {@code java.util.logging} to SLF4J; call first thing in {@code main}. */
    public static void routeJavaUtilLogging() {
        if (!SLF4JBridgeHandler.isInstalled()) {
            SLF4JBridgeHandler.removeHandlersForRootLogger();
            SLF4JBridgeHandler.install();
        }
    }
}

package io.distlock.zookeeper;

import io.distlock.testing.TestPki;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/** Certificates, passwords and secured URIs for the tests against a ZooKeeper server with TLS and digest logins. */
final class SecuredZk {

    /** The digest user the lockers log in as. */
    static final String USER = "locker";

    private SecuredZk() {}

    /** A directory of its own under the build's temporary directory. */
    static Path dir(String name) {
        try {
            Path base = Paths.get(System.getProperty("java.io.tmpdir"));
            Files.createDirectories(base);
            return Files.createTempDirectory(base, name + "-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A new certificate authority in a directory of its own. */
    static TestPki pki(String name) {
        return TestPki.create(dir(name));
    }

    /** A file whose first line is {@code password}, for option {@code passwordFile}. */
    static Path passwordFile(String password) {
        try {
            Path file = Files.createTempFile(dir("password"), "password", ".txt");
            Files.writeString(file, password + "\n", StandardCharsets.UTF_8);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The TLS options trusting {@code pki}, with a client certificate of it (the fixture's server asks for one). */
    static String tlsOptions(TestPki pki) {
        TestPki.Identity client = pki.client(USER);
        return "tls=true&caFile=" + pki.caFile() + "&certFile=" + client.certFile() + "&keyFile=" + client.keyFile();
    }
}

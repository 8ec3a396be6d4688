package io.distlock.testing;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides where a fixture's servers come from, in this order: addresses in an environment variable, a local binary
 * (an environment variable naming it, then {@code PATH}, {@code /usr/bin}, {@code /usr/local/bin}), a Testcontainers
 * container when a Docker engine answers; otherwise it fails with the command that installs the server. It never
 * skips: a test that needs a store and finds none must fail.
 */
final class ServerLocator {

    private static final Logger LOG = LoggerFactory.getLogger(ServerLocator.class);
    private static final List<Path> FIXED_DIRS = List.of(Paths.get("/usr/bin"), Paths.get("/usr/local/bin"));

    /** What was found: external addresses, a binary, or the go-ahead for a container. */
    static final class Choice {
        final ServerSource source;
        final List<String> addresses;
        final Path binary;

        private Choice(ServerSource source, List<String> addresses, Path binary) {
            this.source = source;
            this.addresses = addresses;
            this.binary = binary;
        }
    }

    /** What to look for, for one store. */
    static final class Wanted {
        final String store;
        final String addressesVariable;
        final String binaryVariable;
        final String program;
        final String installCommand;

        Wanted(String store, String addressesVariable, String binaryVariable, String program, String installCommand) {
            this.store = store;
            this.addressesVariable = addressesVariable;
            this.binaryVariable = binaryVariable;
            this.program = program;
            this.installCommand = installCommand;
        }
    }

    private final Function<String, String> environment;
    private final List<Path> searchDirs;
    private final BooleanSupplier dockerAvailable;

    ServerLocator(Function<String, String> environment, List<Path> searchDirs, BooleanSupplier dockerAvailable) {
        this.environment = environment;
        this.searchDirs = List.copyOf(searchDirs);
        this.dockerAvailable = dockerAvailable;
    }

    /** The real environment, {@code PATH} plus the usual directories, and the real Docker check. */
    static ServerLocator system() {
        List<Path> dirs = new ArrayList<>();
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(File.pathSeparator)) {
                if (!dir.isBlank()) {
                    dirs.add(Paths.get(dir));
                }
            }
        }
        dirs.addAll(FIXED_DIRS);
        return new ServerLocator(System::getenv, dirs, Containers::dockerAvailable);
    }

    /** The value of an environment variable, empty when unset or blank. */
    Optional<String> variable(String name) {
        String value = environment.apply(name);
        return value == null || value.isBlank() ? Optional.empty() : Optional.of(value.trim());
    }

    /**
     * Finds the servers for {@code wanted}.
     *
     * @throws IllegalStateException with the install command when there is no way to get a server, or when the
     *     binary variable names a file that is not an executable
     */
    Choice locate(Wanted wanted) {
        Optional<String> addresses = variable(wanted.addressesVariable);
        if (addresses.isPresent()) {
            List<String> list = Arrays.stream(addresses.get().split(","))
                    .map(String::trim)
                    .filter(s -> !s.isEmpty())
                    .collect(Collectors.toList());
            LOG.info("Using {} at {} from {}", wanted.store, list, wanted.addressesVariable);
            return new Choice(ServerSource.ENVIRONMENT, List.copyOf(list), null);
        }
        Optional<String> configuredBinary = variable(wanted.binaryVariable);
        if (configuredBinary.isPresent()) {
            Path binary = Paths.get(configuredBinary.get());
            if (!Files.isRegularFile(binary) || !Files.isExecutable(binary)) {
                throw new IllegalStateException(wanted.binaryVariable + "=" + binary + " is not an executable file; "
                        + "point it at a " + wanted.program + " binary or unset it");
            }
            return new Choice(ServerSource.LOCAL_BINARY, List.of(), binary);
        }
        for (Path dir : searchDirs) {
            Path candidate = dir.resolve(wanted.program);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return new Choice(ServerSource.LOCAL_BINARY, List.of(), candidate);
            }
        }
        if (dockerAvailable.getAsBoolean()) {
            LOG.info("No {} binary found; using a Testcontainers container", wanted.program);
            return new Choice(ServerSource.CONTAINER, List.of(), null);
        }
        throw new IllegalStateException("No " + wanted.store + " server for the tests: " + wanted.program
                + " is not installed (searched " + searchDirs + "), " + wanted.addressesVariable
                + " is not set, and no Docker engine answers. Install it with: " + wanted.installCommand
                + " (or set " + wanted.addressesVariable + " to running servers, or " + wanted.binaryVariable
                + " to the binary)");
    }
}

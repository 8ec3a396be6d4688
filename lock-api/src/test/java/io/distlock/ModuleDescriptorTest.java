package io.distlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The compiled module descriptor: what a modular application can reach, and how backends are found. */
class ModuleDescriptorTest {

    @Test
    void moduleInfo_exportsTheApiTheSpiAndTheToolkitOnly_andFindsProvidersByServiceLoader() throws Exception {
        ModuleDescriptor descriptor;
        Path classes = Path.of(RemoteLocker.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        try (InputStream in = Files.newInputStream(classes.resolve("module-info.class"))) {
            descriptor = ModuleDescriptor.read(in);
        }
        assertThat(descriptor.name()).isEqualTo("io.distlock");
        assertThat(descriptor.exports().stream()
                        .map(ModuleDescriptor.Exports::source)
                        .collect(Collectors.toSet()))
                .containsExactlyInAnyOrder("io.distlock", "io.distlock.spi", "io.distlock.toolkit");
        assertThat(descriptor.exports()).allMatch(e -> !e.isQualified());
        assertThat(descriptor.uses()).containsExactly("io.distlock.spi.LockBackendProvider");
        assertThat(descriptor.provides()).singleElement().satisfies(p -> assertThat(p.providers())
                .containsExactly("io.distlock.memory.MemoryLockBackendProvider"));
    }
}

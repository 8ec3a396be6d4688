/**
 * distlock's API ({@code io.distlock}: what users call), backend SPI ({@code io.distlock.spi}: what store adapters
 * implement) and backend toolkit ({@code io.distlock.toolkit}: what store adapters, tools and tests may use). The
 * shared machinery ({@code io.distlock.internal}) and the in-memory backend are not exported; backends are found with
 * {@link java.util.ServiceLoader}, on the module path ({@code provides}) and on the class path ({@code
 * META-INF/services}) alike.
 */
module io.distlock {
    requires org.slf4j;

    exports io.distlock;
    exports io.distlock.spi;
    exports io.distlock.toolkit;

    uses io.distlock.spi.LockBackendProvider;

    provides io.distlock.spi.LockBackendProvider with
            io.distlock.memory.MemoryLockBackendProvider;
}

/**
 * distlock's API ({@code io.distlock}: what users call) and backend SPI ({@code io.distlock.spi}: what store adapters
 * implement). The shared machinery ({@code io.distlock.internal}) and the in-memory backend are not exported; backends
 * are found with {@link java.util.ServiceLoader}, on the module path ({@code provides}) and on the class path ({@code
 * META-INF/services}) alike.
 */
module io.distlock {
    requires org.slf4j;

    exports io.distlock;
    exports io.distlock.spi;

    uses io.distlock.spi.LockBackendProvider;

    provides io.distlock.spi.LockBackendProvider with
            io.distlock.memory.MemoryLockBackendProvider;
}

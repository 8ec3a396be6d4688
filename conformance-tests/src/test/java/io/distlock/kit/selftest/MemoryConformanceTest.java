package io.distlock.kit.selftest;

import io.distlock.kit.LockerConformanceTests;
import io.distlock.kit.MultiProcessSupport;

/** The reference backend passes the whole kit (the kit's multi-process tests are skipped: memory is per JVM). */
class MemoryConformanceTest extends LockerConformanceTests {

    @Override
    public String lockerUri() {
        return "memory://kit-self-test";
    }

    @Override
    public MultiProcessSupport multiProcessSupport() {
        return MultiProcessSupport.unsupported("memory: locks live inside one JVM; other processes cannot see them");
    }
}

package io.distlock.kit;

/**
 * The outcome of the kit's freeze scenario: the worker frozen while it held the lock, the worker that took the lock
 * meanwhile, and the owner ids of their holds.
 */
record Freeze(Worker victim, String victimOwner, Worker next, String nextOwner) {}

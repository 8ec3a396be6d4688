/**
 * Spring Integration's {@code LockRegistry} over a distlock {@link io.distlock.RemoteLocker}, and its leader initiator
 * on a distlock {@link io.distlock.LeaderElection}, on any backend.
 */
package io.distlock.spring;

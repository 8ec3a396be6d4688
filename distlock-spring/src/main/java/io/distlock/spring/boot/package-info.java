/**
 * Spring Boot auto-configuration for distlock: the {@code distlock.*} properties, a {@link io.distlock.RemoteLocker}
 * closed with the context, a {@link io.distlock.spring.RemoteLockRegistry} when Spring Integration is present, a
 * {@link io.distlock.spring.DistlockLeaderInitiator} when asked for ({@code distlock.leader.election=true}) and a
 * {@code distlock} health indicator when Spring Boot's health support is.
 */
package io.distlock.spring.boot;

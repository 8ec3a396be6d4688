/** Spring Integration's {@code LockRegistry} over a distlock {@link io.distlock.RemoteLocker}, on any backend. */
package io.distlock.spring;

package io.distlock.spring.boot;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code distlock.*} properties: which store the auto-configured {@link io.distlock.RemoteLocker} connects to and
 * how. Only {@code distlock.uri} is required.
 */
@ConfigurationProperties(prefix = DistlockProperties.PREFIX)
public class DistlockProperties {

    /** The prefix of these properties. */
    public static final String PREFIX = "distlock";

    /**
     * The lock store's URI, e.g. zk://zk1:2181,zk2:2181/locks, etcd://etcd1:2379/locks, redis://redis:6379,
     * redlock://r1:6379,r2:6379,r3:6379 or cassandra://c1:9042/locks; query options are allowed.
     */
    private String uri;

    /**
     * The lease time of each lock (the URI's ttl option, default 30s): how long a crashed holder keeps a lock before
     * the store frees it.
     */
    private Duration leaseTime;

    /** How long startup may block connecting to the store (the URI's connectTimeout option, default 10s). */
    private Duration connectTimeout;

    /**
     * Who this application is, stored with every lock entry it writes and shown by inspection and lockctl locks (default:
     * the process id and host, e.g. 4711@worker-7); at most 128 bytes of UTF-8, no control characters.
     */
    private String ownerLabel;

    /**
     * How much longer than its lease a key stays taken when its holder crashed, froze or was cut off (the URI's
     * lockDelay option; default none); a release frees it at once. Only stores that can keep it accept it: on the
     * others startup fails, naming the backend and the option.
     */
    private Duration lockDelay;

    /**
     * Backend options, as if given in the URI's query (see the backend's documentation), e.g. a password kept out of
     * the URI. Values are never logged nor shown in health details.
     */
    private Map<String, String> options = new LinkedHashMap<>();

    private final Health health = new Health();

    private final Leader leader = new Leader();

    /** The store's URI, or null if not set. */
    public String getUri() {
        return uri;
    }

    /** Sets the store's URI. */
    public void setUri(String uri) {
        this.uri = uri;
    }

    /** The lease time, or null for the backend's default. */
    public Duration getLeaseTime() {
        return leaseTime;
    }

    /** Sets the lease time. */
    public void setLeaseTime(Duration leaseTime) {
        this.leaseTime = leaseTime;
    }

    /** The connect timeout, or null for the default. */
    public Duration getConnectTimeout() {
        return connectTimeout;
    }

    /** Sets the connect timeout. */
    public void setConnectTimeout(Duration connectTimeout) {
        this.connectTimeout = connectTimeout;
    }

    /** The owner label, or null for the default (process id and host). */
    public String getOwnerLabel() {
        return ownerLabel;
    }

    /** Sets the owner label. */
    public void setOwnerLabel(String ownerLabel) {
        this.ownerLabel = ownerLabel;
    }

    /** The lock-delay, or null for none. */
    public Duration getLockDelay() {
        return lockDelay;
    }

    /** Sets the lock-delay. */
    public void setLockDelay(Duration lockDelay) {
        this.lockDelay = lockDelay;
    }

    /** The backend options by name. */
    public Map<String, String> getOptions() {
        return options;
    }

    /** Sets the backend options. */
    public void setOptions(Map<String, String> options) {
        this.options = options;
    }

    /** The health indicator's settings. */
    public Health getHealth() {
        return health;
    }

    /** The leader initiator's settings. */
    public Leader getLeader() {
        return leader;
    }

    /** The {@code distlock.leader.*} properties: a {@link io.distlock.spring.DistlockLeaderInitiator}, when asked for. */
    public static class Leader {

        /** The role of the leader initiator when neither distlock.leader.role nor a Candidate bean names one. */
        public static final String DEFAULT_ROLE = "leader";

        /**
         * Whether to join a leader election with a DistlockLeaderInitiator, which publishes Spring Integration's
         * OnGrantedEvent and OnRevokedEvent (needs Spring Integration on the class path). Off by default.
         */
        private boolean election;

        /**
         * The election's name, which is the role of the leadership events (default: the role of the application's
         * Candidate bean if it has one, else leader).
         */
        private String role;

        /**
         * Who this application is in the election, shown to everyone as the leader's identity while it leads (default:
         * the locker's owner label, distlock.owner-label).
         */
        private String identity;

        /** Whether the leader initiator is asked for. */
        public boolean isElection() {
            return election;
        }

        /** Sets whether the leader initiator is asked for. */
        public void setElection(boolean election) {
            this.election = election;
        }

        /** The election's name, or null for the default. */
        public String getRole() {
            return role;
        }

        /** Sets the election's name. */
        public void setRole(String role) {
            this.role = role;
        }

        /** The identity in the election, or null for the locker's owner label. */
        public String getIdentity() {
            return identity;
        }

        /** Sets the identity in the election. */
        public void setIdentity(String identity) {
            this.identity = identity;
        }
    }

    /** The {@code distlock.health.*} properties. */
    public static class Health {

        /**
         * The key the health indicator tries to lock (and releases at once) to see that the store answers. Another
         * holder of it does not make the store unhealthy.
         */
        private String probeKey = "distlock-health-probe";

        /**
         * How long a health check waits for the store's answer before it reports DOWN (default 500ms, well within a
         * Kubernetes probe's default timeout of 1s). Independent of the connect timeout.
         */
        private Duration timeout = Duration.ofMillis(500);

        /** The probe key. */
        public String getProbeKey() {
            return probeKey;
        }

        /** Sets the probe key. */
        public void setProbeKey(String probeKey) {
            this.probeKey = probeKey;
        }

        /** How long a check waits for the store. */
        public Duration getTimeout() {
            return timeout;
        }

        /** Sets how long a check waits for the store. */
        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }
    }

    @Override
    public String toString() {
        // the URI and the options may carry a password
        return "DistlockProperties[options=" + options.keySet() + "]";
    }
}

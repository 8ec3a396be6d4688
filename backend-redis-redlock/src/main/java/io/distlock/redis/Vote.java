package io.distlock.redis;

/** One master's answer to one command of an attempt. */
enum Vote {
    /** The master did it: set the key, deleted or extended our value. */
    YES,
    /** The master answered and refused: the key is another owner's, or no longer ours. */
    NO,
    /** No answer within the per-instance timeout, or an error: the master may or may not have done it. */
    FAILED
}

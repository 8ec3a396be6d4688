-- Compare-and-pexpire (seed 002, extending a lock): reset the time to live only if the key still holds this
-- acquisition's value. Never creates the key: an instance that lost it stays lost for this acquisition. Then reads,
-- and deletes, the release requests to this acquisition (renewed.lua, put before this script).
-- KEYS[1] the lock key; KEYS[2] the key's release requests (a hash of holder value -> request ids).
-- ARGV[1] the acquisition's value; ARGV[2] the new time to live in milliseconds (the lease plus the lock-delay).
-- Returns {0} if the key is not ours here, else what renewed() returns.
if redis.call('get', KEYS[1]) ~= ARGV[1] then
    return {0}
end
redis.call('pexpire', KEYS[1], ARGV[2])
return renewed(KEYS[2], ARGV[1])

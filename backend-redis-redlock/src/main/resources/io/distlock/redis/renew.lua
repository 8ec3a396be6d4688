-- Compare-and-pexpire (seed 002, extending a lock): reset the time to live only if the key still holds this
-- acquisition's value. Never creates the key: an instance that lost it stays lost for this acquisition.
-- KEYS[1] the lock key; ARGV[1] the acquisition's value; ARGV[2] the new time to live in milliseconds.
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0

-- Compare-and-delete (seed 002): delete the lock only if it still holds this acquisition's value, then tell the
-- waiters on the release channel which key was freed.
-- KEYS[1] the lock key; ARGV[1] the acquisition's value; ARGV[2] the release channel.
if redis.call('get', KEYS[1]) == ARGV[1] then
    redis.call('del', KEYS[1])
    redis.call('publish', ARGV[2], KEYS[1])
    return 1
end
return 0

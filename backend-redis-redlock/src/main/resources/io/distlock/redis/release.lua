-- Compare-and-delete (seed 002): delete the lock only if it still holds this acquisition's value; a release then
-- tells the waiters on the release channel which key was freed, by which acquisition (the first 40 characters of its
-- value, the same on every master, so that a locker hearing one release from N masters wakes one waiter once).
-- KEYS[1] the lock key; ARGV[1] the acquisition's value; ARGV[2] the release channel, or '' for the clean-up of a
-- failed attempt, which frees no lock anybody held and wakes nobody.
if redis.call('get', KEYS[1]) == ARGV[1] then
    redis.call('del', KEYS[1])
    if ARGV[2] ~= '' then
        redis.call('publish', ARGV[2], string.sub(ARGV[1], 1, 40) .. ' ' .. KEYS[1])
    end
    return 1
end
return 0

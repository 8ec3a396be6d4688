-- Compare-and-pexpire (seed 002, extending a lock): reset the time to live only if the key still holds this
-- acquisition's value. Never creates the key: an instance that lost it stays lost for this acquisition. Then reads,
-- and deletes, the release requests to this acquisition (holders.lua 'request'): one HGET a renewal, in the same
-- round trip. By redis.pcall, so that a user without HGET and HDEL still renews (and hears no request).
-- KEYS[1] the lock key; KEYS[2] the key's release requests (a hash of holder value -> request ids).
-- ARGV[1] the acquisition's value; ARGV[2] the new time to live in milliseconds (the lease plus the lock-delay).
-- Returns {0} if the key is not ours here; {1} renewed; {1, ids} renewed, with the ids of the requests, separated by
-- spaces; {1, '', error} renewed, the requests unreadable (a permission the user lacks).
if redis.call('get', KEYS[1]) ~= ARGV[1] then
    return {0}
end
redis.call('pexpire', KEYS[1], ARGV[2])
local asked = redis.pcall('hget', KEYS[2], ARGV[1])
if type(asked) == 'table' and asked['err'] then
    return {1, '', asked['err']}
end
if not asked then
    return {1}
end
redis.pcall('hdel', KEYS[2], ARGV[1])
return {1, asked}

-- Who holds one key on one master, for an operator: its lock and the holders of its read-write lock and semaphore,
-- each with the milliseconds its entry has left. 'read' writes nothing (an expired share is skipped, not dropped);
-- 'break' then deletes what it read, as 'redis-cli DEL' would, and tells the waiters on the release channel as a
-- release does, so that they try again at once (the holders learn at their next renewal).
-- KEYS[1] the lock key; KEYS[2] the read-write lock's set; KEYS[3] the semaphore's set (see shared.lua).
-- ARGV[1] 'read' or 'break'; ARGV[2] the release channel (break).
-- Returns {{value, ms left} or {}, {holder, ms left, ...} of the read-write lock, {holder, ms left, ...} of the
-- semaphore}. A key of another type (another tool's) is not a lock here and is left alone.
local time = redis.call('time')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local breaking = ARGV[1] == 'break'

-- A release message (release.lua): the value's first 40 characters name the release, if it has as many; a bare key
-- (another tool's value) wakes a waiter all the same.
local function released(value, key)
    local id = string.sub(value, 1, 40)
    redis.call('publish', ARGV[2], #id == 40 and (id .. ' ' .. key) or key)
end

local lock = {}
if redis.call('type', KEYS[1])['ok'] == 'string' then
    local value = redis.call('get', KEYS[1])
    lock = {value, redis.call('pttl', KEYS[1])}
    if breaking then
        redis.call('del', KEYS[1])
        released(value, KEYS[1])
    end
end

local function shares(set)
    local found = {}
    if redis.call('type', set)['ok'] ~= 'zset' then
        return found
    end
    local entries = redis.call('zrangebyscore', set, '(' .. now, '+inf', 'withscores')
    for i = 1, #entries, 2 do
        found[#found + 1] = entries[i]
        found[#found + 1] = tonumber(entries[i + 1]) - now
    end
    if breaking and #found > 0 then
        redis.call('del', set)
        for i = 1, #found, 2 do
            local tag = string.find(found[i], ':', 1, true) -- a holder is '<tag>:<value>'
            released(tag and string.sub(found[i], tag + 1) or found[i], set)
        end
    end
    return found
end

return {lock, shares(KEYS[2]), shares(KEYS[3])}

-- Who holds one key on one master, for an operator: its lock and the holders of its read-write lock and semaphore,
-- each with the milliseconds its entry has left. 'read' writes nothing (an expired share is skipped, not dropped);
-- 'break' then deletes what it read, as 'redis-cli DEL' would, and tells the waiters on the release channel as a
-- release does, so that they try again at once (the holders learn at their next renewal), and drops the key's release
-- requests. 'request' asks each holder it read to let go: it adds the request's id to the holder's field in the key's
-- release requests, a hash of holder -> ids that lives as long as the longest-lived holder asked (so nothing is left
-- once the holders are gone, and a later holder, of another value, never reads a request meant for an earlier one); the
-- holder's renewal reads and deletes its field (renew.lua, shared.lua). A free key gets nothing.
-- KEYS[1] the lock key; KEYS[2] the read-write lock's set; KEYS[3] the semaphore's set (see shared.lua); KEYS[4] the
-- key's release requests.
-- ARGV[1] 'read', 'break' or 'request'; ARGV[2] the release channel (break); ARGV[3] the request's id (request).
-- Returns {{value, ms left} or {}, {holder, ms left, ...} of the read-write lock, {holder, ms left, ...} of the
-- semaphore}. A key of another type (another tool's) is not a lock here and is left alone.
local time = redis.call('time')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local breaking = ARGV[1] == 'break'
local requesting = ARGV[1] == 'request'

-- Adds the request to the holder's field (ids separated by spaces; the oldest dropped past 16) and keeps the hash
-- alive for the holder's ms left, if that is longer than it has.
local function ask(holder, left)
    if left <= 0 then
        return -- no time to live: another tool's key, not a holder of ours
    end
    local ids = redis.call('hget', KEYS[4], holder)
    if ids and #ids > 16 * (#ARGV[3] + 1) then
        ids = string.sub(ids, string.find(ids, ' ', 1, true) + 1)
    end
    redis.call('hset', KEYS[4], holder, ids and (ids .. ' ' .. ARGV[3]) or ARGV[3])
    if redis.call('pttl', KEYS[4]) < left then
        redis.call('pexpire', KEYS[4], left)
    end
end

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
    elseif requesting then
        ask(value, lock[2])
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
    if requesting then
        for i = 1, #found, 2 do
            ask(found[i], found[i + 1])
        end
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

local held = {lock, shares(KEYS[2]), shares(KEYS[3])}
if breaking then
    redis.call('del', KEYS[4])
end
return held

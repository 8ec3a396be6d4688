-- The holders of one key's read-write lock or semaphore on one master: a sorted set of holder -> expiry, in
-- milliseconds of this master's own clock (TIME), so that a dead holder's share runs out by itself. Every call first
-- drops the holders whose expiry has passed; the key's own time to live is kept at the latest expiry, so that the set
-- vanishes with its last holder. A holder is '<tag>:<value>': tag 'w' for a writer, 'r' for a reader, the number of
-- permits for a semaphore's permit (every holder stores its N, and all holders of a semaphore have the same).
-- A writer that waits marks the read-write lock so (KEYS[2], a string with a short time to live, holding the waiting
-- acquisition's mark), and readers that come while the mark stands are refused as if a writer held the key: a stream
-- of readers cannot starve a waiting writer. Each refused attempt of the writer renews the mark; its grant, or its end
-- without one (release.lua on the mark), deletes it; a writer that died leaves it for its time to live at most. The
-- mark needs no command beyond those locks need (SET, GET, DEL).
-- KEYS[1] the space's set; ARGV[1] the operation: 'acquire', 'renew' or 'release'; ARGV[2] the holder.
-- acquire: ARGV[3] ttl in ms, ARGV[4] 'x' for an exclusive request, 's' for a shared one, ARGV[5] the permits ('' for
--   a reader): 1 granted, 0 refused, -N refused because the semaphore is in use with N permits (nothing written).
--   For a read-write lock, KEYS[2] the writer's mark; a writer that waits gives ARGV[6] its mark and ARGV[7] the
--   mark's time to live in ms (a writer that only tries gives ''). Permits have no mark.
-- renew: KEYS[2] the key's release requests; ARGV[3] ttl in ms: {1} if the holder was still there (its expiry moved),
--   {0} if not (nothing written); else what renewed() returns (renewed.lua, put before this script), the requests to
--   this holder read and deleted.
-- release: ARGV[3] the release channel ('' announces nothing), ARGV[4] the message: 1 if it was there, else 0.
local set = KEYS[1]
local time = redis.call('time')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('zremrangebyscore', set, '-inf', now)

local function expireAtLatest()
    local last = redis.call('zrange', set, -1, -1, 'withscores')
    if last[2] then
        redis.call('pexpire', set, math.max(1, tonumber(last[2]) - now))
    end
end

local op, holder = ARGV[1], ARGV[2]
if op == 'acquire' then
    local mark = KEYS[2]
    local count = redis.call('zcard', set)
    if count > 0 then
        if ARGV[4] == 'x' then
            if mark and ARGV[6] and ARGV[6] ~= '' then
                redis.call('set', mark, ARGV[6], 'px', ARGV[7])
            end
            return 0
        end
        local tag = string.match(redis.call('zrange', set, 0, 0)[1], '^[^:]*')
        if tag == 'w' then
            return 0
        end
        if ARGV[5] ~= '' then
            if tag ~= ARGV[5] then
                return -tonumber(tag)
            end
            if count >= tonumber(ARGV[5]) then
                return 0
            end
        end
    end
    if mark and ARGV[4] == 's' and redis.call('get', mark) then
        return 0 -- a writer waits: a reader that comes after it waits behind it
    end
    redis.call('zadd', set, now + tonumber(ARGV[3]), holder)
    expireAtLatest()
    if mark and ARGV[6] and ARGV[6] ~= '' and redis.call('get', mark) == ARGV[6] then
        redis.call('del', mark)
    end
    return 1
elseif op == 'renew' then
    if not redis.call('zscore', set, holder) then
        return {0}
    end
    redis.call('zadd', set, 'xx', now + tonumber(ARGV[3]), holder)
    expireAtLatest()
    return renewed(KEYS[2], holder)
elseif op == 'release' then
    if redis.call('zrem', set, holder) == 0 then
        return 0
    end
    expireAtLatest()
    if ARGV[3] ~= '' then
        redis.call('publish', ARGV[3], ARGV[4])
    end
    return 1
end
return redis.error_reply('unknown operation ' .. tostring(op))

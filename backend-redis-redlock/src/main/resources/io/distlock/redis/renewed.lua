-- Put before renew.lua and shared.lua by LuaScript: what a renewal answers once it extended a holder's entry. It reads
-- and deletes the release requests to the holder (holders.lua 'request'): one HGET a renewal, in the renewal's own
-- round trip. By redis.pcall, so that a user without HGET and HDEL still renews (and hears no request).
-- requests: the key's release requests (a hash of holder -> request ids); holder: the holder's field.
-- Returns {1}; {1, ids} with the ids of the requests, separated by spaces; {1, '', error} when they could not be read
-- (a permission the user lacks).
local function renewed(requests, holder)
    local asked = redis.pcall('hget', requests, holder)
    if type(asked) == 'table' and asked['err'] then
        return {1, '', asked['err']}
    end
    if not asked then
        return {1}
    end
    redis.pcall('hdel', requests, holder)
    return {1, asked}
end


-- Deletes KEYS[1] only if it still holds our owner id ARGV[1]; returns 1 if deleted, 0 otherwise.
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('del', KEYS[1])
end
return 0

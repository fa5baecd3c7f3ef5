-- Rate-limit buckets are one-minute counters: losing them in a crash of the database server only gives
-- every client a fresh minute. Unlogged, a bucket's update writes no WAL, so the request that takes a
-- point does not wait for a WAL flush (that fsync was the slowest part of a cached API call's p99).
ALTER TABLE "rate_limit_buckets" SET UNLOGGED;

-- wrk script: POST the benchmark body (path in BENCH_BODY) as JSON.
-- BENCH_ACCEPT, when set, is sent as the Accept header
-- (application/x-ndjson asks the chat routes for a stream).
-- With BENCH_RAMP_MS set, the first requests of each wrk thread's
-- BENCH_CONNS_PER_THREAD connections are spread evenly over that many
-- milliseconds instead of leaving all at once; later requests wait for
-- nothing.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local accept = os.getenv("BENCH_ACCEPT") or ""
if accept ~= "" then
    wrk.headers["Accept"] = accept
end
local f = assert(io.open(os.getenv("BENCH_BODY"), "rb"))
wrk.body = f:read("*a")
f:close()

local ramp = tonumber(os.getenv("BENCH_RAMP_MS") or "0") or 0
if ramp > 0 then
    local per = tonumber(os.getenv("BENCH_CONNS_PER_THREAD") or "1") or 1
    local n = 0
    function delay()
        if n >= per then
            return 0
        end
        n = n + 1
        return math.floor((n - 1) * ramp / per)
    end
end

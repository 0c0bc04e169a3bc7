-- The create and update load of bench/local-api.ts for wrk (a C load generator that leaves the
-- cores to the server; see README "Benchmarks"): every request creates (POST) or merge-patches (PATCH) a
-- ConfigMap with a name no other request uses, so each one is a durable write. Settings come
-- from the environment: TOKEN, MODE (create | update), COUNT (objects per wrk thread, for
-- updates), PREFIX (names of this run). Each wrk thread numbers its own names.
local token = os.getenv("TOKEN")
local mode = os.getenv("MODE") or "create"
local prefix = os.getenv("PREFIX") or "w"
local count = tonumber(os.getenv("COUNT") or "0")
local path = "/api/v1/namespaces/bench/configmaps"
local threads = 0

function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

function init(args)
  n = 0
  create_headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }
  patch_headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/merge-patch+json" }
end

function request()
  n = n + 1
  if mode == "create" then
    local body = '{"metadata":{"name":"' .. prefix .. tid .. "-" .. n .. '"},"data":{"v":"x"}}'
    return wrk.format("POST", path, create_headers, body)
  end
  local i = ((n - 1) % count) + 1
  return wrk.format("PATCH", path .. "/" .. prefix .. tid .. "-" .. i, patch_headers, '{"data":{"v":"' .. n .. '"}}')
end

function response(status, headers, body)
  if status >= 300 then
    errors_seen = (errors_seen or 0) + 1
  end
end

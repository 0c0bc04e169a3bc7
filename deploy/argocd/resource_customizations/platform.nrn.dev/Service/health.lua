-- Argo CD health of a platform.nrn.dev Service, from the status nrn-operator writes
-- (deploy/argocd/README.md). Lua 5.1, base and table libraries only: no string library, no require.
local hs = { status = "Progressing", message = "waiting for the operator to write a status" }
local status = obj.status
local conditions = {}
if status ~= nil and status.conditions ~= nil then
  for _, c in ipairs(status.conditions) do conditions[c.type] = c end
end
local function is(kind) return conditions[kind] ~= nil and conditions[kind].status == "True" end
local function says(kind, otherwise)
  local c = conditions[kind]
  if c ~= nil and c.message ~= nil and c.message ~= "" then return c.reason .. ": " .. c.message end
  return otherwise
end

local phase = (status ~= nil and status.status) or "pending"
local generation = obj.metadata.generation
if obj.metadata.deletionTimestamp ~= nil then
  hs.message = "being deleted: " .. says("Reconciling", phase)
elseif status == nil then
  return hs
elseif generation ~= nil and (status.observedGeneration == nil or status.observedGeneration < generation) then
  hs.message = "the operator has not yet observed generation " .. generation
    .. " (the status is of generation " .. (status.observedGeneration or "none") .. ")"
elseif phase == "failed" or is("Stalled") then
  hs.status = "Degraded"
  hs.message = phase .. ": " .. says("Stalled", says("Ready", "failed"))
elseif phase == "active" and is("Ready") then
  hs.status = "Healthy"
  hs.message = says("Ready", "active")
else
  hs.message = phase .. ": " .. says("Reconciling", says("Ready", "in progress"))
end
return hs

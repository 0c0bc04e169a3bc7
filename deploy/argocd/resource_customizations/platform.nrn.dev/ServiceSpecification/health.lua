-- Argo CD health of a platform.nrn.dev ServiceSpecification, from the conditions nrn-operator writes
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

local generation = obj.metadata.generation
if obj.metadata.deletionTimestamp ~= nil then
  hs.message = "being deleted"
elseif status == nil then
  return hs
elseif generation ~= nil and (status.observedGeneration == nil or status.observedGeneration < generation) then
  hs.message = "the operator has not yet observed generation " .. generation
    .. " (the status is of generation " .. (status.observedGeneration or "none") .. ")"
elseif is("Stalled") then
  hs.status = "Degraded"
  hs.message = says("Stalled", says("Ready", "stalled"))
elseif is("Ready") then
  hs.status = "Healthy"
  hs.message = says("Ready", "ready")
else
  hs.message = says("Reconciling", says("Ready", "waiting for the Ready condition"))
end
return hs

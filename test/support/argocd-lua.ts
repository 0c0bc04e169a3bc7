// Runs an Argo CD health script (deploy/argocd/) as Argo CD runs it: the object in the global
// `obj`, only the libraries Argo CD opens, the returned table read back as a health status. Two
// interpreters: Debian's lua5.1 (the language of gopher-lua, which Argo CD embeds) and fengari
// (Lua 5.3 in JavaScript, always installed).
//
// What Argo CD opens, from argoproj/argo-cd util/lua/lua.go (VM.runLua): lua.NewState with
// SkipOpenLibs unless a customization sets useOpenLibs, then only OpenPackage, OpenBase,
// OpenTable and its own OpenSafeOs (util/lua/oslib_safe.go: os.time and os.date); the object is
// decodeValue(obj.Object) set as the global `obj`, the script runs under a 1 s context, and
// ExecuteHealthLua turns the table it returns into {status, message}. Without OpenString,
// gopher-lua gives strings no metatable, so `s:find()` fails there: the sandbox below takes the
// string metatable's __index away to fail the same way. `require`/`package` are left out on
// purpose: the scripts must stand alone (Argo CD runs each alone).
import { spawnSync } from 'node:child_process';
import fengari from 'fengari';

export const LUA51 = '/usr/bin/lua5.1';

/** An Argo CD health status (gitops-engine pkg/health HealthStatus). */
export interface LuaHealth {
  readonly status: string;
  readonly message: string;
}

/** Deeper than any Kubernetes object a test hands in: a guard, not a limit anyone meets. */
const MAX_DEPTH = 64;

/**
 * `value` as a Lua table constructor, as Argo CD's decodeValue builds it: JSON null is nil
 * (an absent key), numbers are numbers, arrays are sequences from 1.
 */
export function luaLiteral(value: unknown, depth = 0): string {
  if (depth > MAX_DEPTH) throw new Error(`luaLiteral: deeper than ${MAX_DEPTH}`);
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`luaLiteral: ${value} is not JSON`);
    return String(value);
  }
  if (typeof value === 'string') return luaString(value);
  if (Array.isArray(value)) {
    return `{${value.map((item) => luaLiteral(item, depth + 1)).join(', ')}}`;
  }
  if (typeof value === 'object') {
    const fields = Object.entries(value)
      .filter(([, item]) => item !== null && item !== undefined)
      .map(([key, item]) => `[${luaString(key)}] = ${luaLiteral(item, depth + 1)}`);
    return `{${fields.join(', ')}}`;
  }
  throw new Error(`luaLiteral: ${typeof value} is not JSON`);
}

/** A Lua 5.1 string literal: quotes, backslashes and control characters as `\ddd` escapes. */
function luaString(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    // Three digits always, so a digit after the escape is not read into it.
    else if (code < 32 || code === 127) out += `\\${String(code).padStart(3, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** A Lua chunk, valid in 5.1 and 5.3, that runs `script` on `object` and returns status, message. */
function harness(script: string, object: unknown): string {
  return `
local source, object = ${luaString(script)}, ${luaLiteral(object)}
local env = { obj = object }
for _, name in ipairs({ "assert", "error", "getmetatable", "ipairs", "next", "pairs", "pcall",
    "print", "rawequal", "rawget", "rawlen", "rawset", "select", "setmetatable", "tonumber",
    "tostring", "type", "unpack", "xpcall", "_VERSION" }) do
  env[name] = _G[name]
end
env._G = env
env.table = { concat = table.concat, insert = table.insert, remove = table.remove,
  sort = table.sort, getn = table.getn, maxn = table.maxn, unpack = table.unpack }
env.os = { time = os.time, date = os.date }
local chunk, problem
if setfenv then
  chunk, problem = loadstring(source, "=health.lua")
  if chunk then setfenv(chunk, env) end
else
  chunk, problem = load(source, "=health.lua", "t", env)
end
if not chunk then error(problem, 0) end
getmetatable("").__index = nil
local hs = chunk()
if type(hs) ~= "table" then error("expect table output from Lua script, not " .. type(hs), 0) end
if type(hs.status) ~= "string" then error("the table has no status string", 0) end
if hs.message ~= nil and type(hs.message) ~= "string" then error("message is not a string", 0) end
return hs.status, hs.message or ""
`;
}

/** Runs `script` on `object` in fengari. */
export function runInFengari(script: string, object: unknown): LuaHealth {
  const { lua, lauxlib, lualib, to_luastring } = fengari;
  const L = lauxlib.luaL_newstate();
  try {
    lualib.luaL_openlibs(L);
    if (
      lauxlib.luaL_loadstring(L, to_luastring(harness(script, object))) !== lua.LUA_OK ||
      lua.lua_pcall(L, 0, 2, 0) !== lua.LUA_OK
    ) {
      throw new Error(`fengari: ${lua.lua_tojsstring(L, -1)}`);
    }
    return { status: lua.lua_tojsstring(L, -2), message: lua.lua_tojsstring(L, -1) };
  } finally {
    lua.lua_close(L);
  }
}

/** Why lua5.1 cannot run here, or undefined when it can. */
export function lua51Missing(): string | undefined {
  const run = spawnSync(LUA51, ['-v'], { encoding: 'utf8', timeout: 10_000 });
  if (run.error !== undefined) return `${LUA51} cannot run (${run.error.message}); install lua5.1`;
  return undefined;
}

/** Runs `script` on `object` in Debian's lua5.1. */
export function runInLua51(script: string, object: unknown): LuaHealth {
  const program = `local status, message = (function() ${harness(script, object)} end)()\nio.write(status, "\\n", message)\n`;
  const run = spawnSync(LUA51, ['-'], { input: program, encoding: 'utf8', timeout: 10_000 });
  if (run.error !== undefined) throw run.error;
  if (run.status !== 0) throw new Error(`lua5.1: ${run.stderr.trim()}`);
  const at = run.stdout.indexOf('\n');
  return { status: run.stdout.slice(0, at), message: run.stdout.slice(at + 1) };
}

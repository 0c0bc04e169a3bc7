// The few parts of fengari (Lua 5.3 in JavaScript; it ships no types) that test/support/argocd-lua.ts uses.
declare module 'fengari' {
  type LuaState = object;
  type LuaString = Uint8Array;
  const fengari: {
    to_luastring(value: string): LuaString;
    lua: {
      LUA_OK: number;
      lua_pcall(L: LuaState, nargs: number, nresults: number, handler: number): number;
      lua_tojsstring(L: LuaState, index: number): string;
      lua_close(L: LuaState): void;
    };
    lauxlib: {
      luaL_newstate(): LuaState;
      luaL_loadstring(L: LuaState, source: LuaString): number;
    };
    lualib: { luaL_openlibs(L: LuaState): void };
  };
  export default fengari;
}

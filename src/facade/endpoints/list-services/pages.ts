// Rendered GET /service pages of recent queries, kept while the catalog stands still: a
// catalog is read far more often than it changes, and clients poll the same queries. Any
// change of the catalog (a service or specification added, changed, removed) drops them all,
// so a page is never older than the catalog it came from. Bounded in pages and bytes; a page
// is kept the second time its query is asked at one catalog version, so a stream of one-off
// queries does not churn the cache (and the garbage collector) for nothing.

export interface PageCacheLimits {
  /** Pages kept at most. */
  readonly pages: number;
  /** Bytes of rendered pages kept at most; a page larger than an eighth of it is not kept. */
  readonly bytes: number;
}

const DEFAULT_PAGE_CACHE_LIMITS: PageCacheLimits = { pages: 1024, bytes: 32 * 1024 * 1024 };

export class PageCache {
  // Map order is insertion order: a hit is moved to the end, so the first key is the least
  // recently used.
  private readonly pages = new Map<string, Buffer>();
  /** Queries asked once at this version, oldest first: the candidates for keeping. */
  private readonly asked = new Set<string>();
  private bytes = 0;
  private version = -1;

  constructor(private readonly limits: PageCacheLimits = DEFAULT_PAGE_CACHE_LIMITS) {}

  /** The page rendered for `key` at catalog `version`, if kept. */
  get(key: string, version: number): Buffer | undefined {
    if (version !== this.version) {
      if (version > this.version) this.clear(version);
      return undefined;
    }
    const page = this.pages.get(key);
    if (page !== undefined) {
      this.pages.delete(key);
      this.pages.set(key, page);
    }
    return page;
  }

  /** Keeps `page` for `key`, rendered at catalog `version`. */
  set(key: string, version: number, page: Buffer): void {
    // The catalog's versions only grow: a page from an older one is already out of date.
    if (version < this.version) return;
    if (version > this.version) this.clear(version);
    if (page.length > this.limits.bytes / 8 || this.limits.pages === 0) return;
    if (!this.asked.delete(key)) {
      if (this.asked.size >= this.limits.pages * 4) {
        this.asked.delete(this.asked.values().next().value as string);
      }
      this.asked.add(key);
      return;
    }
    const old = this.pages.get(key);
    if (old !== undefined) {
      this.pages.delete(key);
      this.bytes -= old.length;
    }
    while (
      this.pages.size > 0 &&
      (this.pages.size >= this.limits.pages || this.bytes + page.length > this.limits.bytes)
    ) {
      const [oldest, dropped] = this.pages.entries().next().value as [string, Buffer];
      this.pages.delete(oldest);
      this.bytes -= dropped.length;
    }
    this.pages.set(key, page);
    this.bytes += page.length;
  }

  get size(): number {
    return this.pages.size;
  }

  private clear(version: number): void {
    this.pages.clear();
    this.asked.clear();
    this.bytes = 0;
    this.version = version;
  }
}

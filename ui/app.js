// The status page: the token form, the filters (mirrored in the URL hash, never the token),
// the NRN tree with counts, one page of scopes and services from the server, a detail view, and
// live updates from GET /watch applied once per animation frame. Nothing here walks every
// resource: the server pages and counts; an event touches at most the row it names, and
// anything else is a throttled refetch of one page and the tree.
import {
  facadeRoot,
  forgetToken,
  getJson,
  query,
  setToken,
  token,
  Unauthenticated,
} from './api.js';
import { openStream } from './sse.js';

const PAGE_SIZE = 100;
const REFETCH_MS = 1000; // at most one refetch of the page and the tree per this, however busy
const FILTERS = ['nrn', 'kind', 'type', 'status', 'q'];

const $ = (id) => document.getElementById(id);

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat(Number.POSITIVE_INFINITY)) {
    if (child === undefined || child === null) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// --- state -------------------------------------------------------------------------------

const state = {
  filters: {},
  detail: undefined, // {kind, namespace, name}
  cursors: [], // the cursor of each page before the current one
  cursor: undefined,
  rows: new Map(), // key → <tr> of the current page
  pending: new Map(), // key → latest event not yet applied
  frame: 0,
  stream: undefined,
  refetchTimer: 0,
  refetchDirty: { page: false, tree: false, detail: false },
  // The tree as shown: nrn → its counts <span> and <li>, and the query it was built for. A
  // refetch of the same query only rewrites counts that changed and adds or removes nodes:
  // rebuilding 11,000 nodes every second froze the page for half a second (bench:facade).
  tree: { query: undefined, nodes: new Map() },
};

const keyOf = (r) => `${r.kind}/${r.namespace}/${r.name}`;

// --- the hash: filters and the resource shown ---------------------------------------------

function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  const filters = {};
  for (const name of FILTERS) {
    const value = params.get(name);
    if (value) filters[name] = value.slice(0, 512);
  }
  const detail = params.get('detail');
  const parts = detail?.split('/');
  return {
    filters,
    detail:
      parts?.length === 3 && (parts[0] === 'scope' || parts[0] === 'service')
        ? { kind: parts[0], namespace: parts[1], name: parts[2] }
        : undefined,
  };
}

function hashOf(filters, detail) {
  const params = new URLSearchParams();
  for (const name of FILTERS) if (filters[name]) params.set(name, filters[name]);
  if (detail) params.set('detail', `${detail.kind}/${detail.namespace}/${detail.name}`);
  return `#${params.toString()}`;
}

function navigate(filters, detail) {
  const next = hashOf(filters, detail);
  // The same view again (Apply pressed twice): fetched anew, the caller asked for it.
  if (next === location.hash || (next === '#' && location.hash === '')) onHash(true);
  else {
    // Opening or closing the detail is not asking for the list again.
    state.refresh = JSON.stringify(detail) === JSON.stringify(state.detail);
    location.hash = next;
  }
}

// --- status words -------------------------------------------------------------------------

const SYMBOL = {
  active: '✓',
  failed: '✗',
  stalled: '✗',
  paused: '⏸',
  pending: '…',
  creating: '↻',
  updating: '↻',
  deleting: '⌫',
};

/** The lifecycle value, as the status filter names it; "unknown" before the operator wrote one. */
const statusOf = (r) => r.status || 'unknown';

/**
 * The status as a word, a symbol and the states on top of it (stalled, paused, reconciling,
 * stale): colour only repeats what the words say.
 */
function statusCell(r) {
  const word = statusOf(r);
  const extra = [
    r.stalled ? 'stalled' : '',
    r.paused ? 'paused' : '',
    r.reconciling && !['pending', 'creating', 'updating', 'deleting'].includes(word)
      ? 'reconciling'
      : '',
    r.stale ? 'stale' : '',
  ]
    .filter(Boolean)
    .join(', ');
  const tone = r.stalled ? 'failed' : r.paused ? 'paused' : word;
  return h(
    'td',
    { class: `status status-${tone}` },
    h('span', { 'aria-hidden': 'true' }, `${SYMBOL[tone] ?? '?'} `),
    word,
    extra ? ` (${extra})` : '',
  );
}

/** An RFC 3339 time as people read it, in UTC. */
const when = (time) => (time ? time.replace('T', ' ').replace(/(\.\d+)?Z$/, ' UTC') : undefined);

/** An NRN that wraps between its parts, not inside them. */
function nrnCell(nrn) {
  const parts = (nrn ?? '').split(':');
  return h(
    'td',
    { class: 'nrn' },
    parts.flatMap((part, i) => (i === 0 ? [part] : [h('wbr'), `:${part}`])),
  );
}

function countsText(counts) {
  const part = (label, byStatus) => {
    const entries = Object.entries(byStatus ?? {}).filter(([, n]) => n > 0);
    const total = entries.reduce((sum, [, n]) => sum + n, 0);
    if (total === 0) return `${label}: none`;
    entries.sort(([a], [b]) => (a === 'failed' ? -1 : b === 'failed' ? 1 : a.localeCompare(b)));
    return `${label}: ${total} (${entries.map(([s, n]) => `${n} ${s}`).join(', ')})`;
  };
  return `${part('Scopes', counts?.scope)}. ${part('Services', counts?.service)}.`;
}

// --- the list -----------------------------------------------------------------------------

function row(r) {
  const link = h(
    'a',
    {
      href: hashOf(state.filters, r),
      'aria-label': `${r.kind} ${r.name}: details`,
    },
    r.slug && r.slug !== r.name ? `${r.name} (${r.slug})` : r.name,
  );
  return h(
    'tr',
    { 'data-key': keyOf(r), 'data-status': `${statusOf(r)}${r.stalled ? ' stalled' : ''}` },
    statusCell(r),
    h('td', {}, r.kind),
    h('td', {}, link),
    h('td', {}, r.type ?? ''),
    nrnCell(r.nrn),
    h('td', { class: 'reason' }, [r.reason, r.message].filter(Boolean).join(': ')),
    h('td', {}, r.since ? h('time', { datetime: r.since }, when(r.since)) : ''),
  );
}

async function loadPage() {
  const page = await getJson(
    `status/resources${query(state.filters, { limit: PAGE_SIZE, cursor: state.cursor })}`,
  );
  const body = $('list-body');
  const rows = new Map();
  const fresh = page.results.map((r) => {
    const tr = row(r);
    rows.set(keyOf(r), tr);
    return tr;
  });
  body.replaceChildren(...fresh);
  state.rows = rows;
  const first = state.cursors.length * PAGE_SIZE;
  $('list-caption').textContent =
    page.results.length === 0
      ? 'Nothing matches the filters.'
      : `${first + 1}–${first + page.results.length} of ${page.total}`;
  state.nextCursor = page.next_cursor;
  $('next-page').disabled = page.next_cursor === undefined;
  $('first-page').disabled = state.cursor === undefined;
}

// --- the tree -----------------------------------------------------------------------------

const parentOf = (nrn) => {
  const at = nrn.lastIndexOf(':');
  return at < 0 ? '' : nrn.slice(0, at);
};

function nodeCounts(counts) {
  const failed = (counts?.scope?.failed ?? 0) + (counts?.service?.failed ?? 0);
  const total = [counts?.scope, counts?.service]
    .flatMap((c) => Object.values(c ?? {}))
    .reduce((sum, n) => sum + n, 0);
  return failed > 0 ? `${total}, ${failed} failed` : `${total}`;
}

async function loadTree() {
  const q = query(state.filters);
  const tree = await getJson(`status/tree${q}`);
  $('counts').textContent = countsText(tree.counts);
  const shown = state.tree;
  const rebuild = shown.query !== q;
  const nodes = rebuild ? new Map() : shown.nodes;
  const root = rebuild ? h('ul') : ($('tree-body').querySelector('ul') ?? h('ul'));
  const listOf = (nrn) => nodes.get(nrn)?.children ?? root;
  const item = (node) => {
    const current = state.filters.nrn === node.nrn;
    const counts = h('span', { class: 'counts' }, `(${nodeCounts(node.counts)})`);
    // Empty lists are hidden by the stylesheet (ul:empty), so none needs removing.
    const children = h('ul');
    const li = h(
      'li',
      {},
      h(
        'button',
        {
          type: 'button',
          'aria-current': current ? 'true' : undefined,
          onclick: () => navigate({ ...state.filters, nrn: node.nrn }, undefined),
        },
        `${node.level} ${node.name ?? node.nrn.slice(node.nrn.lastIndexOf('=') + 1)}`,
      ),
      ' ',
      counts,
      children,
    );
    return { li, counts, children };
  };
  // The server lists parents before children (a prefix sorts first); a node whose parent is
  // filtered away hangs from the root.
  const sorted = [...tree.nodes].sort((a, b) => a.nrn.length - b.nrn.length);
  const seen = new Set();
  for (const node of sorted) {
    seen.add(node.nrn);
    const known = nodes.get(node.nrn);
    if (known !== undefined) {
      const text = `(${nodeCounts(node.counts)})`;
      if (known.counts.textContent !== text) known.counts.textContent = text;
      continue;
    }
    const made = item(node);
    nodes.set(node.nrn, made);
    listOf(parentOf(node.nrn)).append(made.li);
  }
  for (const [nrn, known] of nodes) {
    if (seen.has(nrn)) continue;
    known.li.remove();
    nodes.delete(nrn);
  }
  state.tree = { query: q, nodes };
  if (root.childElementCount === 0) {
    $('tree-body').replaceChildren(h('p', {}, 'No applications.'));
    state.tree = { query: undefined, nodes: new Map() };
  } else if (rebuild || root.parentElement === null) {
    $('tree-body').replaceChildren(root);
  }
}

// --- the detail ---------------------------------------------------------------------------

/** A table named by the heading it follows (`labelledBy`), or a line saying it is empty. */
function table(labelledBy, empty, headers, rows) {
  if (rows.length === 0) return h('p', {}, empty);
  // Scrolls inside its own box, so the page reflows at 200% zoom without a side scroll.
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { 'aria-labelledby': labelledBy },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((cells) =>
          h(
            'tr',
            {},
            cells.map((c) => h('td', {}, c ?? '')),
          ),
        ),
      ),
    ),
  );
}

async function loadDetail(focus) {
  const d = state.detail;
  const section = $('detail');
  if (d === undefined) {
    section.hidden = true;
    return;
  }
  let body;
  try {
    body = await getJson(
      `status/resources/${encodeURIComponent(d.kind)}/${encodeURIComponent(d.namespace)}/${encodeURIComponent(d.name)}`,
    );
  } catch (error) {
    if (error instanceof Unauthenticated) throw error;
    section.hidden = false;
    $('detail-heading').textContent = `${d.kind} ${d.name}`;
    $('detail-body').replaceChildren(h('p', { class: 'error' }, error.message));
    return;
  }
  const s = body.summary;
  $('detail-heading').textContent = `${s.kind} ${s.name}`;
  const fields = [
    ['Status', statusCell(s).textContent.replace(/^\S+ /, '')],
    ['Namespace', s.namespace],
    ['NRN', s.nrn],
    ['Type', s.type],
    ['Id', s.id],
    ['Slug', s.slug],
    ['Application', s.application_id],
    ['Reason', s.reason],
    ['Message', s.message],
    ['Since', when(s.since)],
  ].filter(([, v]) => v !== undefined && v !== '');
  const messages = (body.messages ?? []).map((m) =>
    typeof m === 'string'
      ? m
      : [m.level, m.message ?? JSON.stringify(m)].filter(Boolean).join(': '),
  );
  $('detail-body').replaceChildren(
    h(
      'dl',
      {},
      fields.map(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))]),
    ),
    h('h3', { id: 'detail-conditions' }, 'Conditions'),
    table(
      'detail-conditions',
      'No conditions yet.',
      ['Type', 'Status', 'Reason', 'Message', 'Since'],
      (body.conditions ?? []).map((c) => [
        c.type,
        c.status,
        c.reason,
        c.message,
        when(c.lastTransitionTime),
      ]),
    ),
    h('h3', {}, 'Messages'),
    messages.length === 0
      ? h('p', {}, 'No messages.')
      : h(
          'ul',
          {},
          messages.map((m) => h('li', {}, m)),
        ),
    h('h3', {}, 'Children'),
    (body.children ?? []).length === 0
      ? h('p', {}, 'No children.')
      : h(
          'ul',
          {},
          body.children.map((c) =>
            h(
              'li',
              {},
              `${c.kind} ${c.namespace ? `${c.namespace}/` : ''}${c.name} (${c.apiVersion})`,
            ),
          ),
        ),
    h('h3', { id: 'detail-events' }, 'Last events, newest first'),
    table(
      'detail-events',
      'No events.',
      ['Type', 'Reason', 'Message', 'Count', 'Last seen', 'Source'],
      (body.events ?? []).map((e) => [
        e.type,
        e.reason,
        e.message,
        e.count,
        when(e.last_seen),
        e.source,
      ]),
    ),
  );
  section.hidden = false;
  if (focus) $('detail-heading').focus();
}

// --- live updates -------------------------------------------------------------------------

function scheduleRefetch(parts) {
  Object.assign(state.refetchDirty, parts);
  if (state.refetchTimer !== 0) return;
  state.refetchTimer = setTimeout(() => {
    state.refetchTimer = 0;
    const dirty = state.refetchDirty;
    state.refetchDirty = { page: false, tree: false, detail: false };
    const calls = [];
    if (dirty.page) calls.push(loadPage());
    if (dirty.tree) calls.push(loadTree());
    if (dirty.detail) calls.push(loadDetail(false));
    Promise.all(calls).catch(failed);
  }, REFETCH_MS);
}

function applyPending() {
  state.frame = 0;
  const events = state.pending;
  state.pending = new Map();
  let unseen = false;
  let detail = false;
  for (const [key, event] of events) {
    const tr = state.rows.get(key);
    if (state.detail !== undefined && key === keyOf(state.detail)) detail = true;
    if (tr === undefined) {
      unseen = true;
    } else if (event.type === 'delete') {
      tr.remove();
      state.rows.delete(key);
      unseen = true; // the page has a free place a later resource fills
    } else {
      const next = row(event.data);
      tr.replaceWith(next);
      state.rows.set(key, next);
      // A change into or out of failure moves it across the order: the server re-sorts.
      if (next.dataset.status !== tr.dataset.status) unseen = true;
    }
  }
  scheduleRefetch({ tree: true, page: unseen, detail });
}

function onStreamEvent(type, data) {
  if (type === 'ready') {
    if (!state.resumed) refetchAll();
    state.resumed = true;
    return;
  }
  if (type === 'reset') {
    refetchAll();
    return;
  }
  if (type !== 'upsert' && type !== 'delete') return;
  let parsed;
  try {
    parsed = JSON.parse(data);
  } catch {
    return;
  }
  state.pending.set(keyOf(parsed), { type, data: parsed });
  if (state.frame === 0) state.frame = requestAnimationFrame(applyPending);
}

function openLive() {
  state.stream?.stop();
  state.resumed = false;
  const url = new URL(`watch${query(state.filters)}`, facadeRoot());
  const shown = $('connection');
  state.stream = openStream({
    url,
    token,
    onEvent: onStreamEvent,
    onState: (s, delay) => {
      if (s === 'unauthenticated') {
        forgetToken();
        showLogin('The token was refused.');
        return;
      }
      if (s === 'unavailable') {
        shown.textContent = 'Live updates unavailable';
        refetchAll();
        return;
      }
      shown.textContent =
        s === 'live'
          ? 'Live'
          : s === 'waiting'
            ? `Disconnected; reconnecting in ${Math.round(delay / 1000)} s`
            : 'Connecting…';
    },
  });
}

// --- putting it together -------------------------------------------------------------------

function refetchAll() {
  Promise.all([loadTree(), loadPage(), loadDetail(false)]).catch(failed);
}

function failed(error) {
  if (error instanceof Unauthenticated) {
    showLogin(token() === null && error.message !== 'no token' ? 'The token was refused.' : '');
    return;
  }
  $('list-caption').textContent = `Could not load: ${error.message}`;
}

function showLogin(message) {
  state.stream?.stop();
  state.stream = undefined;
  $('app').hidden = true;
  $('sign-out').hidden = true;
  $('login').hidden = false;
  $('login-error').textContent = message ?? '';
  $('connection').textContent = 'Not connected';
  $('token').focus();
}

function showApp() {
  $('login').hidden = true;
  $('app').hidden = false;
  $('sign-out').hidden = false;
  onHash(true);
}

function fillFilterForm() {
  for (const name of FILTERS) $(`f-${name}`).value = state.filters[name] ?? '';
}

let lastFilters = '';
function onHash(forced = false) {
  if (token() === null) return;
  const force = forced === true || state.refresh === true;
  state.refresh = false;
  const { filters, detail } = readHash();
  const detailChanged = JSON.stringify(detail) !== JSON.stringify(state.detail);
  state.filters = filters;
  state.detail = detail;
  fillFilterForm();
  const key = JSON.stringify(filters);
  if (force || key !== lastFilters) {
    lastFilters = key;
    state.cursor = undefined;
    state.cursors = [];
    // The stream's `ready` fetches the data, so what it sends after is applied on top.
    openLive();
  } else if (detailChanged) {
    loadDetail(true).catch(failed);
  }
}

function start() {
  $('login-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const value = $('token').value.trim();
    if (value === '') return;
    setToken(value);
    $('token').value = '';
    showApp();
  });
  $('sign-out').addEventListener('click', () => {
    forgetToken();
    showLogin('Signed out.');
  });
  $('filters').addEventListener('submit', (event) => {
    event.preventDefault();
    const filters = {};
    for (const name of FILTERS) {
      const value = $(`f-${name}`).value.trim();
      if (value !== '') filters[name] = value;
    }
    navigate(filters, state.detail);
  });
  $('filters').addEventListener('reset', (event) => {
    event.preventDefault();
    navigate({}, state.detail);
  });
  $('next-page').addEventListener('click', () => {
    if (state.nextCursor === undefined) return;
    state.cursors.push(state.cursor);
    state.cursor = state.nextCursor;
    loadPage()
      .then(() => $('resources-heading').focus())
      .catch(failed);
  });
  $('first-page').addEventListener('click', () => {
    state.cursor = undefined;
    state.cursors = [];
    loadPage()
      .then(() => $('resources-heading').focus())
      .catch(failed);
  });
  $('detail-close').addEventListener('click', () => navigate(state.filters, undefined));
  addEventListener('hashchange', () => onHash());
  // The skip link moves focus, not the hash: the hash is the view's.
  document.querySelector('.skip').addEventListener('click', (event) => {
    event.preventDefault();
    $('resources-heading').focus();
  });
  if (token() === null) showLogin();
  else showApp();
}

start();

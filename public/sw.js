// vramfit's service worker. The post-build step (scripts/post-build.py) fills in the list of
// the build's files and a version made from their content, so a new build gets a new cache and
// no list is kept by hand.
const VERSION = '__VERSION__';
const PRECACHE = __PRECACHE__;
const CACHE = `vramfit-${VERSION}`;
/** The precached files' paths, as a fetch event's URL names them. */
const PRECACHED = new Set(PRECACHE.map((url) => new URL(url, self.registration.scope).pathname));

// Trunk's content-hashed names (vramfit-web-0123456789abcdef_bg.wasm): a new content is a new
// name, so the browser's HTTP cache may supply them. Every other file (./, i18n/*.txt,
// first-bar/*, pwa.js, …) keeps its name across deploys and is fetched past the HTTP cache: a host
// that lets browsers keep such files (Cache-Control: max-age=600) would otherwise fill the new
// version's cache with the old files, offline too. (Trunk writes the hash as hex without leading
// zeros: main-56775f54b16ebb8.css has 15 digits.)
const HASHED = /-[0-9a-f]{12,16}(_bg)?\.(wasm|js|css|svg)$/;

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches.open(CACHE).then((cache) =>
      cache.addAll(PRECACHE.map((url) => (HASHED.test(url) ? url : new Request(url, { cache: 'reload' }))))),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith('vramfit-') && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

// The page asks a waiting worker to take over when the user accepts the update.
self.addEventListener('message', (event) => {
  if (event.data === 'skip-waiting') self.skipWaiting();
});

/**
 * Whether `url` is the app's own page: its scope's root or index.html there, with any query
 * (the page's state lives in it). Any other path in scope (a typo answered by 404.html, another
 * site's page when vramfit lives at a domain's root) is not vramfit's to answer.
 */
function isAppPage(url) {
  const root = new URL('./', self.registration.scope).pathname;
  return url.pathname === root || url.pathname === `${root}index.html`;
}

/**
 * The navigation, revalidated with the server: a page the HTTP cache kept from before a deploy
 * would name the previous build's hashed files, which the new cache no longer holds.
 */
function fetchFresh(request) {
  let fresh = request;
  try {
    fresh = new Request(request, { cache: 'no-cache' });
  } catch {
    // an engine that cannot copy a navigation request: the browser's own cache mode
  }
  return fetch(fresh);
}

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === 'navigate') {
    // other paths go to the network untouched: online the server answers (a 404, another page),
    // offline the browser says it is offline, never with this app's page or a stored error page
    if (!isAppPage(url)) return;
    // Network first, so a deployed update shows; offline, the page of this version's precache
    // (any query). A navigation's answer is never stored as the offline copy: an error status
    // (a 414 for an over-long query) must not replace it, and a new deploy's page, fetched while
    // this older worker is still in control, names hashed files this cache does not hold.
    event.respondWith(
      fetchFresh(request).catch(() =>
        caches.match('./', { cacheName: CACHE }).then((r) => r || caches.match('index.html', { cacheName: CACHE }))
          .then((r) => r || Response.error())),
    );
    return;
  }
  // A file this version does not list goes to the network untouched: the worker has nothing
  // to add to it, and a load it does not intercept cannot fail inside it.
  if (!PRECACHED.has(url.pathname)) return;
  // precached files: cache first (hashed ones never change; the others are this version's).
  // The network only if the cache lost the file (storage evicted); a load the page abandons
  // there (the next navigation aborts it) is a network error for nobody, not a rejected
  // respondWith, which Firefox reports in the console as the worker's "unexpected error".
  event.respondWith(
    caches.match(request, { ignoreSearch: true, cacheName: CACHE })
      .then((cached) => cached || fetch(request))
      .catch(() => Response.error()),
  );
});

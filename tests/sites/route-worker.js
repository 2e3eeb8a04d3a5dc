// A service worker of routes.html: it reaches the host it is given as it installs.
const out = new URL(self.location.href).searchParams.get('out');
self.addEventListener('install', (event) => {
  event.waitUntil(fetch(out + '/route/service-worker').catch(() => {}));
});

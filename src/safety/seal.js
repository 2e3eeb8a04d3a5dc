// The domain policy in a browser seamark attached to, for the routes out
// that its request interception (`Fetch`) does not see: WebSockets,
// WebTransport and WebRTC. Run in every document and worker of seamark's
// tabs before their own scripts (see browser/intercept.rs). A launched
// browser needs none of it: its proxy sees every connection.
//
// `__POLICY__` is replaced with `{"allow": [...], "block": [...]}`, each
// pattern `{"host": "example.com", "wildcard": true}` (domains.rs).
(() => {
  const policy = __POLICY__;
  const g = globalThis;
  const matches = (p, host) =>
    (p.wildcard && p.host === "") || host === p.host || (p.wildcard && host.endsWith("." + p.host));
  // Why a connection to `raw` is refused, or null when it may go (or is no
  // URL: the browser's own constructor then says why).
  const refusal = (raw) => {
    let url;
    try {
      url = new URL(String(raw), g.location.href);
    } catch (e) {
      return null;
    }
    const host = url.hostname.toLowerCase().replace(/\.$/, "").replace(/^\[|\]$/g, "");
    if (policy.block.some((p) => matches(p, host))) {
      return `${host} is blocked by seamark's domain policy`;
    }
    if (policy.allow.length && !policy.allow.some((p) => matches(p, host))) {
      return `${host} is outside the domains seamark may reach`;
    }
    return null;
  };
  const fix = (object, name, value) => {
    try {
      Object.defineProperty(object, name, { value, writable: false, configurable: false });
    } catch (e) {
      // Sealed already (a second run in the same context).
    }
  };
  // A constructor that checks its URL first. The original is reachable by
  // no property: the prototype's `constructor` is the checked one too.
  const checked = (name) => {
    const Native = g[name];
    if (typeof Native !== "function") return;
    const Checked = function (url) {
      if (!new.target) throw new TypeError(`Failed to construct '${name}': use 'new'`);
      const why = refusal(url);
      if (why) throw new DOMException(why, "SecurityError");
      return Reflect.construct(Native, arguments, new.target === Checked ? Native : new.target);
    };
    for (const key of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) {
      if (key in Native) fix(Checked, key, Native[key]);
    }
    fix(Checked, "name", name);
    Checked.prototype = Native.prototype;
    fix(Native.prototype, "constructor", Checked);
    fix(g, name, Checked);
  };
  checked("WebSocket");
  checked("WebSocketStream");
  checked("WebTransport");
  // A WebRTC peer is an address, not a host: no domain policy can check
  // it, nor the STUN and TURN servers it is reached through. Off.
  for (const name of ["RTCPeerConnection", "webkitRTCPeerConnection"]) {
    const Native = g[name];
    if (typeof Native !== "function") continue;
    const Off = function () {
      throw new DOMException(
        "WebRTC is off while seamark limits domains: a peer's address cannot be checked",
        "NotAllowedError",
      );
    };
    Off.prototype = Native.prototype;
    fix(Native.prototype, "constructor", Off);
    fix(g, name, Off);
  }
  // A service worker runs apart from the tab, where no check follows it.
  const container = g.ServiceWorkerContainer && g.ServiceWorkerContainer.prototype;
  if (container) {
    fix(container, "register", function register() {
      return Promise.reject(
        new DOMException("service workers are off while seamark limits domains", "SecurityError"),
      );
    });
  }
})();

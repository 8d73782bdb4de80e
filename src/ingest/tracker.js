/* Leadtrail tracker: <script defer src="BASE/script.js" data-site-id="N"></script> */
(function (w, d, n) {
  "use strict";
  var me = d.currentScript;
  if (!me || w.leadtrail) return;
  var site = +me.getAttribute("data-site-id");
  // A site that honours Do Not Track says so on the tag; then an opted-out
  // browser sends nothing and keeps no id (the server refuses it anyway).
  if (me.hasAttribute("data-respect-dnt") &&
      (n.globalPrivacyControl === true || n.doNotTrack === "1" || w.doNotTrack === "1")) {
    w.leadtrail = { track: function () {}, visitorId: function () { return null; } };
    return;
  }
  var api = me.getAttribute("data-api") || new URL(me.src).origin + "/api/collect";
  var cookieless = me.getAttribute("data-mode") === "cookieless";
  var KEY = "lt_vid", vid = null, path = null, lastUrl = d.referrer, shown = Date.now(), engaged = 0;

  function visitor() {
    if (cookieless) return null;
    if (vid) return vid;
    try { vid = localStorage.getItem(KEY); } catch (e) {}
    if (!vid) { var m = d.cookie.match(/(?:^|; )lt_vid=([^;]+)/); vid = m && m[1]; }
    if (!vid) {
      vid = w.crypto && crypto.randomUUID ? crypto.randomUUID()
        : Date.now().toString(36) + Math.random().toString(36).slice(2);
    }
    try { localStorage.setItem(KEY, vid); } catch (e) {}
    d.cookie = KEY + "=" + vid + "; path=/; max-age=31536000; SameSite=Lax";
    return vid;
  }

  function send(type, extra) {
    var e = { site: site, type: type, url: location.href, title: d.title, referrer: lastUrl || undefined };
    var id = visitor();
    if (id) e.tracker_vid = id;
    for (var k in extra) e[k] = extra[k];
    var body = JSON.stringify(e);
    try { if (n.sendBeacon && n.sendBeacon(api, body)) return; } catch (x) {}
    fetch(api, { method: "POST", body: body, keepalive: true, headers: { "Content-Type": "text/plain" } }).catch(function () {});
  }

  function pageview() {
    if (location.pathname === path) return;
    var first = path === null;
    path = location.pathname;
    var extra = {};
    var click = first && new URLSearchParams(location.search).get("lt_click");
    if (click) extra.lt_click = click;
    send("pageview", extra);
    lastUrl = location.href;
  }

  function visible() { return d.visibilityState === "visible"; }
  function ping() {
    if (visible()) engaged += Date.now() - shown;
    shown = Date.now();
    if (engaged > 0) send("ping", { engaged_ms: engaged });
    engaged = 0;
  }

  d.addEventListener("visibilitychange", function () {
    if (visible()) shown = Date.now(); else engaged += Date.now() - shown;
  });
  w.addEventListener("pagehide", ping);

  ["pushState", "replaceState"].forEach(function (name) {
    var original = history[name];
    history[name] = function () {
      var result = original.apply(this, arguments);
      pageview();
      return result;
    };
  });
  w.addEventListener("popstate", pageview);

  d.addEventListener("submit", function (event) {
    var form = event.target;
    send("custom_event", {
      event_name: "form_submit",
      props: { form_id: form.id || "", form_name: form.getAttribute("name") || "", action: form.getAttribute("action") || "" }
    });
  }, true);

  w.leadtrail = {
    // options.revenue: {amount: "19.99", currency: "USD"}, kept exactly.
    track: function (name, props, options) {
      var extra = { event_name: String(name), props: props || {} };
      if (options && options.revenue) extra.revenue = { amount: String(options.revenue.amount), currency: String(options.revenue.currency) };
      send("custom_event", extra);
    },
    visitorId: visitor
  };
  pageview();
})(window, document, navigator);

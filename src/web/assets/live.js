// The live page's updates: a small graphql-transport-ws client for the
// liveVisitors subscription on /graphql/ws. The socket is same-origin, so
// the session cookie authenticates it. Every value is written as text.
"use strict";

(function () {
  var MAX_ROWS = 100;
  var QUERY =
    "subscription Live($siteId: Int!) { liveVisitors(siteId: $siteId) " +
    "{ trackerVid identifiedUserId type eventName page timestamp } }";

  function start() {
    var table = document.getElementById("activity");
    var rows = document.getElementById("activity-rows");
    var status = document.getElementById("live-status");
    if (!table || !rows) return;
    var siteId = parseInt(table.getAttribute("data-site-id"), 10);
    var received = 0;
    var retry = 1000;

    function say(text) {
      if (status) status.textContent = text;
    }

    // A cell; `label` names its column where a phone shows rows as cards.
    function cell(tag, text, className, label) {
      var element = document.createElement(tag);
      element.textContent = text;
      if (className) element.className = className;
      if (label) element.setAttribute("data-label", label);
      return element;
    }

    // The display rule of service/people.rs, with what a streamed event
    // carries: the user id, else "Anonymous" and the end of the visitor id.
    function who(event) {
      if (event.identifiedUserId) return event.identifiedUserId;
      var id = (event.trackerVid || "").trim();
      return id ? "Anonymous " + id.slice(-8) : "Anonymous";
    }

    function add(event) {
      var row = document.createElement("tr");
      row.className = "fresh";
      var time = new Date(event.timestamp);
      row.appendChild(cell("td", isNaN(time) ? "" : time.toISOString().slice(11, 19), "", "Time (UTC)"));
      var name = document.createElement("th");
      name.scope = "row";
      var link = cell("a", who(event));
      link.href = "/visitor/" + encodeURIComponent(event.trackerVid) + "?site=" + siteId;
      name.appendChild(link);
      row.appendChild(name);
      // As the server names it (parts::what): a custom event by its name.
      var what = event.type === "pageview" || !event.eventName ? event.type : event.eventName;
      row.appendChild(cell("td", what, "", "Event"));
      row.appendChild(cell("td", event.page, "path", "Page"));
      rows.insertBefore(row, rows.firstChild);
      while (rows.children.length > MAX_ROWS) rows.removeChild(rows.lastChild);
      var empty = document.getElementById("activity-empty");
      if (empty) empty.remove();
      received += 1;
      say("Live: " + received + (received === 1 ? " new event" : " new events") + " since the page loaded.");
      refreshSoon();
    }

    // The tiles and the visitors panel are figures the server computes: after
    // new events, fetch the page again (at most every few seconds) and swap
    // those two sections in place, so they never contradict the activity.
    var refreshing = null;
    function refreshSoon() {
      if (refreshing) return;
      refreshing = setTimeout(function () {
        fetch(location.href, { credentials: "same-origin", headers: { accept: "text/html" } })
          .then(function (reply) { return reply.ok ? reply.text() : Promise.reject(reply.status); })
          .then(function (html) {
            var fresh = new DOMParser().parseFromString(html, "text/html");
            ["live-tiles", "live-visitors"].forEach(function (id) {
              var now = document.getElementById(id);
              var next = fresh.getElementById(id);
              if (now && next) now.replaceWith(document.importNode(next, true));
            });
          })
          .catch(function () {})
          .then(function () { refreshing = null; });
      }, 3000);
    }

    function connect() {
      var scheme = location.protocol === "https:" ? "wss://" : "ws://";
      var socket = new WebSocket(scheme + location.host + "/graphql/ws", "graphql-transport-ws");
      socket.onopen = function () {
        socket.send(JSON.stringify({ type: "connection_init" }));
      };
      socket.onmessage = function (message) {
        var data;
        try {
          data = JSON.parse(message.data);
        } catch (e) {
          return;
        }
        if (data.type === "connection_ack") {
          retry = 1000;
          say("Live: waiting for new events.");
          socket.send(JSON.stringify({ id: "live", type: "subscribe", payload: { query: QUERY, variables: { siteId: siteId } } }));
        } else if (data.type === "ping") {
          socket.send(JSON.stringify({ type: "pong" }));
        } else if (data.type === "next" && data.payload && data.payload.data) {
          add(data.payload.data.liveVisitors);
        } else if (data.type === "error") {
          say("Live updates stopped: the server refused the subscription. Reload to try again.");
          socket.onclose = null;
          socket.close();
        }
      };
      socket.onclose = function () {
        say("Live updates paused; reconnecting\u2026");
        setTimeout(connect, retry);
        retry = Math.min(retry * 2, 30000);
      };
    }

    connect();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();

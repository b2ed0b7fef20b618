// looprinter serve: the few live parts of the dashboard. Everything else is
// drawn on the server; this only refreshes parts and appends records.
"use strict";
(function () {
  // The login link `serve` prints carries the token in the fragment (never
  // sent to a server): fill the form and submit it.
  var login = document.getElementById("login");
  if (login && location.hash.indexOf("#token=") === 0) {
    document.getElementById("token").value = decodeURIComponent(location.hash.slice(7));
    history.replaceState(null, "", location.pathname);
    login.submit();
  }

  document.querySelectorAll("form.confirm").forEach(function (f) {
    f.addEventListener("submit", function (e) {
      if (!window.confirm(f.dataset.confirm)) e.preventDefault();
    });
  });

  function refresh(el, url) {
    return fetch(url, { credentials: "same-origin" }).then(function (r) {
      if (r.ok) return r.text();
      throw new Error(r.status);
    }).then(function (html) { el.innerHTML = html; }).catch(function () {});
  }

  // The list: re-draw the rows whenever the list of loops changes.
  var table = document.getElementById("loops");
  if (table && window.EventSource) {
    var rows = document.getElementById("rows");
    var first = true;
    new EventSource(table.dataset.live).addEventListener("loops", function () {
      if (first) { first = false; return; }
      refresh(rows, "/?part=rows" + (location.search ? "&" + location.search.slice(1) : ""));
    });
  }

  // A loop's page: append each new record; re-draw the live part (plan,
  // gates, charts, timeline) at most once a second while records come.
  var list = document.getElementById("records");
  var live = document.getElementById("live");
  if (list && window.EventSource) {
    var pending = null;
    var es = new EventSource(list.dataset.stream);
    es.addEventListener("record", function (m) {
      var ev;
      try { ev = JSON.parse(m.data); } catch (e) { return; }
      var li = document.createElement("li");
      li.className = "ev-" + ev.event;
      li.textContent = ev.text || line(ev);
      var atEnd = list.scrollTop + list.clientHeight >= list.scrollHeight - 8;
      list.appendChild(li);
      if (atEnd) list.scrollTop = list.scrollHeight;
      if (live && !pending) {
        pending = setTimeout(function () { pending = null; refresh(live, live.dataset.src); }, 1000);
      }
    });
  }

  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function line(ev) {
    var t = new Date(ev.ts);
    var s = pad(t.getHours()) + ":" + pad(t.getMinutes()) + ":" + pad(t.getSeconds()) + " ";
    if (ev.cycle) s += "[c" + ev.cycle + (ev.iteration ? " i" + ev.iteration : "") + "] ";
    s += ev.event.replace(/_/g, " ");
    if (ev.phase) s += " " + ev.phase;
    if (ev.task) s += " " + ev.task;
    if (ev.gate) s += " " + ev.gate;
    if (ev.pass === true) s += ": pass"; else if (ev.pass === false) s += ": FAIL";
    if (ev.status) s += " (" + ev.status + ")";
    if (ev.reason) s += ": " + ev.reason;
    var msg = ev.summary || ev.message || ev.error || "";
    if (msg) s += ": " + msg.split("\n")[0];
    return s;
  }
})();

/* proactive-tui viewer. Draws the page from the JSON of the data script element (id "data").
   Every piece of data goes in through textContent (el() below), never parsed as HTML, so model
   output and environment text show as written and can never become markup or script. */
(function () {
  "use strict";

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    var key;
    for (key in attrs || {}) {
      if (Object.prototype.hasOwnProperty.call(attrs, key)) {
        if (key === "text") { node.textContent = attrs[key]; }
        else if (key === "className") { node.className = attrs[key]; }
        else { node.setAttribute(key, attrs[key]); }
      }
    }
    (children || []).forEach(function (child) { if (child) { node.appendChild(child); } });
    return node;
  }

  function text(value) { return value === null || value === undefined ? "-" : String(value); }

  function sourceClass(source) {
    return "source " + String(source).split(",")[0].trim().replace(/[^a-z]+/g, "-");
  }

  function sourceBadge(source) { return el("span", { className: sourceClass(source), text: source }); }

  function factsTable(rows, id) {
    var attrs = { className: "facts" };
    if (id) { attrs.id = id; }
    return el("table", attrs, [el("tbody", {}, rows.map(function (row) {
      return el("tr", {}, [el("td", { text: text(row[0]) }), el("td", { className: "text", text: text(row[1]) })]);
    }))]);
  }

  function dataTable(columns, rows, align) {
    align = align || [];
    return el("table", {}, [
      el("thead", {}, [el("tr", {}, columns.map(function (c, i) {
        return el("th", { className: align[i] === "right" ? "right" : "", text: text(c) });
      }))]),
      el("tbody", {}, rows.map(function (row) {
        return el("tr", {}, row.map(function (cell, i) {
          return el("td", { className: align[i] === "right" ? "right" : "text", text: text(cell) });
        }));
      }))
    ]);
  }

  /* One block of a family's report section (core.report): line, speech, facts or table. */
  function block(b) {
    if (b.kind === "speech") {
      var head = el("div", { className: "head" }, [
        el("span", { className: "speaker", text: (b.turn !== null && b.turn !== undefined ? "turn " + b.turn + " · " : "") + b.speaker }),
        b.who ? el("span", { className: "muted", text: " (" + b.who + ")" }) : null,
        b.partial ? el("span", { className: "notice", text: " [cut off]" }) : null,
        b.muted ? el("span", { className: "muted", text: " (not shown to the user)" }) : null
      ]);
      var turn = el("div", { className: "turn " + b.speaker + (b.muted ? " muted" : "") }, [head, el("div", { className: "text", text: b.text })]);
      if (b.turn !== null && b.turn !== undefined) { turn.setAttribute("data-turn", String(b.turn)); }
      return turn;
    }
    if (b.kind === "line") {
      var p = el("p", { className: "line" + (b.style ? " style-" + b.style : "") }, [
        b.label ? el("span", { className: "label", text: b.label }) : null,
        el("span", { className: "text", text: b.text })
      ]);
      if (b.indent) { p.style.marginLeft = (1.5 * b.indent) + "rem"; }
      return p;
    }
    if (b.kind === "facts") { return factsTable(b.rows); }
    return el("div", {}, [b.title ? el("h3", { text: b.title }) : null, dataTable(b.columns, b.rows, b.align)]);
  }

  function judgesPanel(view) {
    var panel = el("section", { id: "judges" }, [el("h2", { text: "Judges and scores" })]);
    if (view.scores.length) {
      panel.appendChild(dataTable(["score", "value", "by", "source"], view.scores.map(function (s) {
        return [s.label, s.display, s.by || "-", s.source];
      }), ["left", "right", "left", "left"]));
    } else {
      panel.appendChild(el("p", { className: "muted", text: "No scores: nothing judged this session." }));
    }
    view.verdicts.forEach(function (v) {
      var box = el("div", { className: "judge", "data-key": v.key }, [
        el("div", {}, [el("span", { className: "label", text: v.label }), sourceBadge(v.source)]),
        el("div", { text: v.kind + " by " + v.judge + ": " + v.value }),
        v.detail ? el("div", { className: "text muted", text: v.detail }) : null
      ]);
      if (v.person) {
        box.appendChild(el("div", {}, [
          sourceBadge(v.person.source),
          el("span", { text: " " + (v.person.agree ? "agrees" : "disagrees: " + v.person.value) + (v.person.note ? " — " + v.person.note : "") })
        ]));
      }
      panel.appendChild(box);
    });
    return panel;
  }

  function sessionView(session, back) {
    var view = session.view;
    var root = el("section", { id: "session", "data-session": view.id }, []);
    if (back) { root.appendChild(el("button", { className: "back", type: "button", text: "← all sessions" })); root.lastChild.addEventListener("click", back); }
    root.appendChild(el("h1", { text: view.title }));
    root.appendChild(factsTable(view.header, "header"));
    view.sections.forEach(function (s) {
      var part = el("section", { className: "report-section", "data-id": s.id || "" }, [el("h2", { text: s.title })]);
      s.blocks.forEach(function (b) { part.appendChild(block(b)); });
      root.appendChild(part);
    });
    root.appendChild(judgesPanel(view));
    if (view.failures.length) {
      root.appendChild(el("section", { id: "errors" }, [el("h2", { className: "error", text: "Errors" })].concat(
        view.failures.map(function (f) { return el("p", { className: "error text", text: f.who + ": " + f.message }); }))));
    }
    return root;
  }

  function reportView(data, app) {
    var report = data.report;
    var sessions = data.sessions;
    var list = el("div", { id: "report" }, []);
    list.appendChild(el("h1", { text: "Report: " + report.folder }));
    list.appendChild(el("p", { text: report.status + (report.source === "recomputed" ? " (recomputed from the run records: report.json was missing or unreadable)" : "") }));
    var d = report.data;
    list.appendChild(factsTable([["Selectors", (d.selectors || []).join(", ")], ["Agents", (d.agents || []).join(", ")],
      ["Other seats", Object.keys(d.models || {}).sort().map(function (k) { return k + ": " + d.models[k]; }).join(", ")],
      ["Repeats", text(d.repeats)], ["Written", d.timing && d.timing.generated_at ? d.timing.generated_at : "-"]]));
    report.problems.forEach(function (p) { list.appendChild(el("p", { className: "notice text", text: "skipped: " + p })); });
    (report.deviations || []).forEach(function (line) { list.appendChild(el("p", { className: "notice text protocol", text: line })); });
    if (report.interval_note) { list.appendChild(el("p", { className: "muted text", text: report.interval_note })); }
    var tables = el("section", { id: "report-tables" }, []);
    report.tables.forEach(function (t) {
      var part = el("div", { className: "report-table", "data-family": t.family, "data-table": t.id }, [el("h2", { text: t.title }), dataTable(t.header, t.rows, t.align)]);
      t.notes.forEach(function (n) { part.appendChild(el("p", { className: "muted text", text: n })); });
      tables.appendChild(part);
    });
    if (!report.tables.length) { tables.appendChild(el("p", { className: "muted", text: "No finished sessions: no tables." })); }
    list.appendChild(tables);

    list.appendChild(el("h2", { text: "Sessions (" + sessions.length + ")" }));
    var filter = el("input", { id: "filter", type: "search", placeholder: "filter: environment, model, status, text…" });
    var models = el("select", { id: "model-filter" }, [el("option", { value: "", text: "every agent model" })]);
    sessions.map(function (s) { return s.agent; }).filter(function (m, i, all) { return all.indexOf(m) === i; }).sort().forEach(function (m) {
      models.appendChild(el("option", { value: m, text: m }));
    });
    var sort = el("select", { id: "sort" }, [["key", "sort: session"], ["env", "sort: environment"], ["agent", "sort: agent model"],
      ["score-desc", "sort: headline score, high first"], ["score-asc", "sort: headline score, low first"], ["status", "sort: failing first"]].map(function (o) {
      return el("option", { value: o[0], text: o[1] });
    }));
    var count = el("span", { className: "muted", id: "shown-count" });
    list.appendChild(el("div", { className: "controls" }, [filter, models, sort, count]));
    var body = el("tbody", {}, []);
    list.appendChild(el("table", { id: "sessions" }, [el("thead", {}, [el("tr", {}, ["environment", "agent", "settings", "repeat", "status", "headline score"].map(function (h) {
      return el("th", { text: h });
    }))]), body]));

    function haystack(s) {
      var parts = [s.key_id, s.env_id, s.agent, s.family, s.status, s.reason, JSON.stringify(s.settings)];
      if (s.session) {
        s.session.view.sections.forEach(function (sec) { sec.blocks.forEach(function (b) { if (b.text) { parts.push(b.text); } }); });
      }
      return parts.join("\n").toLowerCase();
    }
    var hay = sessions.map(haystack);
    function score(s) { return s.headline && typeof s.headline.value === "number" ? s.headline.value : null; }
    function compare(how) {
      return function (a, b) {
        var x = sessions[a], y = sessions[b];
        if (how === "env") { return x.env_id < y.env_id ? -1 : x.env_id > y.env_id ? 1 : a - b; }
        if (how === "agent") { return x.agent < y.agent ? -1 : x.agent > y.agent ? 1 : a - b; }
        if (how === "status") { return (y.reason ? 1 : 0) - (x.reason ? 1 : 0) || a - b; }
        if (how === "score-desc" || how === "score-asc") {
          var p = score(x), q = score(y);
          if (p === null && q === null) { return a - b; }
          if (p === null) { return 1; }
          if (q === null) { return -1; }
          return (how === "score-desc" ? q - p : p - q) || a - b;
        }
        return a - b;
      };
    }
    function draw() {
      var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
      var order = sessions.map(function (s, i) { return i; }).filter(function (i) {
        return (!models.value || sessions[i].agent === models.value) && words.every(function (w) { return hay[i].indexOf(w) >= 0; });
      }).sort(compare(sort.value));
      while (body.firstChild) { body.removeChild(body.firstChild); }
      order.forEach(function (i) {
        var s = sessions[i];
        var settings = Object.keys(s.settings).sort().map(function (k) { return k + "=" + s.settings[k]; }).join(", ");
        var row = el("tr", { className: "session-row" + (s.reason ? " failed" : ""), "data-key": s.key_id, tabindex: "0" }, [
          el("td", { className: "text", text: s.env_id }), el("td", { text: s.agent }), el("td", { text: settings || "-" }),
          el("td", { className: "right", text: String(s.repeat) }),
          el("td", { className: "text", text: s.status + (s.reason ? ": " + s.reason : "") }),
          el("td", { className: "right", text: s.headline ? s.headline.label + " " + s.headline.display : "-" })
        ]);
        row.addEventListener("click", function () { location.hash = "s=" + encodeURIComponent(s.file); });
        row.addEventListener("keydown", function (e) { if (e.key === "Enter") { location.hash = "s=" + encodeURIComponent(s.file); } });
        body.appendChild(row);
      });
      count.textContent = order.length + " of " + sessions.length + " shown";
    }
    [filter, models, sort].forEach(function (c) { c.addEventListener("input", draw); c.addEventListener("change", draw); });
    draw();

    function route() {
      var match = /^#s=(.*)$/.exec(location.hash);
      var key = match ? decodeURIComponent(match[1]) : null;
      var chosen = sessions.filter(function (s) { return s.file === key; })[0];  /* its file: a key may be in sessions/ and failed/ */
      var old = document.getElementById("session");
      if (old) { old.parentNode.removeChild(old); }
      if (chosen) {
        list.style.display = "none";
        var back = function () { location.hash = ""; };
        app.appendChild(chosen.session ? sessionView(chosen.session, back)
          : el("section", { id: "session" }, [el("p", { className: "error text", text: chosen.key_id + ": no run record (" + chosen.reason + ")" })]));
        window.scrollTo(0, 0);
      } else {
        list.style.display = "";
      }
    }
    app.appendChild(list);
    window.addEventListener("hashchange", route);
    route();
  }

  function themeToggle() {
    var button = document.getElementById("theme-toggle");
    var root = document.documentElement;
    button.addEventListener("click", function () {
      var dark = root.getAttribute("data-theme") ? root.getAttribute("data-theme") === "dark"
        : window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
      root.setAttribute("data-theme", dark ? "light" : "dark");
    });
  }

  function main() {
    var app = document.getElementById("app");
    themeToggle();
    var data;
    try {
      data = JSON.parse(document.getElementById("data").textContent);
    } catch (e) {
      app.appendChild(el("p", { className: "error", text: "The page's data cannot be read: " + e }));
      return;
    }
    if (data.kind === "report") { reportView(data, app); }
    else { app.appendChild(sessionView(data.session, null)); }
  }

  main();
}());

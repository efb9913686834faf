// Live progress over the API's server-sent events (GET /runs/{id}/events?after=N).
// Pages work without this script; it only keeps progress, status and running counts current,
// and shows the run form's fields that apply to the chosen agent and dataset.
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var MAX_STREAMS = 4; // browsers allow about six connections per host over HTTP/1.1

  function setText(root, field, text) {
    var el = root.querySelector('[data-field="' + field + '"]');
    if (el) el.textContent = text;
  }

  function follow(root) {
    var id = root.getAttribute("data-live-run");
    var done = parseInt(root.getAttribute("data-done") || "0", 10);
    var running = parseInt(root.getAttribute("data-running") || "0", 10);
    // episode id -> [rounds, target calls] of the running episodes ("step" events carry them)
    var eps = JSON.parse(root.getAttribute("data-running-eps") || "{}");
    var url = "/runs/" + encodeURIComponent(id) + "/events?after=" + (root.getAttribute("data-after") || "0");
    var source = new EventSource(url);
    var bar = root.querySelector("progress");
    function show() {
      setText(root, "done", String(done));
      var rounds = 0, calls = 0;
      Object.keys(eps).forEach(function (k) { rounds += eps[k][0]; calls += eps[k][1]; });
      setText(root, "running", running > 0 ?
        "(" + running + " running: rounds " + rounds + ", target calls " + calls + ")" : "");
      if (bar) bar.value = done;
      root.setAttribute("data-done", String(done));
    }
    function episodeOf(ev) { return JSON.parse(ev.data).episode_id; }
    source.addEventListener("episode_started", function (ev) {
      running += 1; eps[episodeOf(ev)] = [0, 0]; show();
    });
    source.addEventListener("step", function (ev) {
      var e = JSON.parse(ev.data);
      eps[e.episode_id] = [e.data.rounds || 0, e.data.target_calls || 0]; show();
    });
    source.addEventListener("episode_finished", function (ev) {
      done += 1; running = Math.max(0, running - 1); delete eps[episodeOf(ev)]; show();
    });
    source.addEventListener("run_status", function (ev) {
      var status = JSON.parse(ev.data).data.status;
      var cell = root.querySelector('[data-field="status"]');
      if (cell) cell.innerHTML = '<span class="status status-' + status + '"></span>';
      if (cell) cell.firstChild.textContent = status;
    });
    source.addEventListener("end", function () {
      source.close();
      if (root.hasAttribute("data-reload-on-end")) window.location.reload();
    });
  }

  document.querySelectorAll("[data-live-run]").forEach(function (el, i) {
    if (i < MAX_STREAMS && window.EventSource) follow(el);
  });

  // The run form: only the chosen agent's option fields (disabled fieldsets are neither checked
  // nor sent), and only the families the chosen dataset serves.
  document.querySelectorAll("form[data-run-form]").forEach(function (form) {
    var agent = form.querySelector("#r-agent"), path = form.querySelector("#r-agent-path");
    var dataset = form.querySelector("#r-dataset"), family = form.querySelector("#r-family");
    function showOptions() {
      var custom = path !== null && path.value.trim() !== "";
      form.querySelectorAll("[data-agent-options]").forEach(function (fs) {
        var on = !custom && fs.getAttribute("data-agent-options") === agent.value;
        fs.hidden = !on;
        fs.disabled = !on;
      });
    }
    function showFamilies() {
      family.querySelectorAll("option[data-datasets]").forEach(function (o) {
        var served = o.getAttribute("data-datasets").split(" ").indexOf(dataset.value) >= 0;
        o.hidden = !served;
        o.disabled = !served;
        if (!served && o.selected) family.value = "";
      });
    }
    agent.addEventListener("change", showOptions);
    if (path) path.addEventListener("input", showOptions);
    dataset.addEventListener("change", showFamilies);
    showOptions();
    showFamilies();
  });

  document.querySelectorAll("[data-toggle-all]").forEach(function (button) {
    button.addEventListener("click", function () {
      var open = button.textContent === "Expand all";
      document.querySelectorAll("ol.transcript details").forEach(function (d) { d.open = open; });
      button.textContent = open ? "Collapse all" : "Expand all";
    });
  });
})();

// The GraphQL explorer: written here, no third-party code, works offline.
(function () {
  "use strict";
  var endpoint = "/graphql";
  var $ = function (id) { return document.getElementById(id); };

  function post(body) {
    return fetch(endpoint, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body)
    }).then(function (response) { return response.json(); });
  }

  function run() {
    var variables;
    try {
      variables = JSON.parse($("variables").value || "{}");
    } catch (e) {
      $("result").textContent = "Variables are not valid JSON: " + e.message;
      $("result").className = "error";
      return;
    }
    $("result").className = "";
    $("result").textContent = "Running…";
    post({ query: $("query").value, variables: variables })
      .then(function (json) { $("result").textContent = JSON.stringify(json, null, 2); })
      .catch(function (e) { $("result").className = "error"; $("result").textContent = String(e); });
  }

  function typeName(t) {
    if (!t) return "";
    if (t.kind === "NON_NULL") return typeName(t.ofType) + "!";
    if (t.kind === "LIST") return "[" + typeName(t.ofType) + "]";
    return t.name;
  }

  function element(tag, text, cls) {
    var node = document.createElement(tag);
    if (text) node.textContent = text;
    if (cls) node.className = cls;
    return node;
  }

  var introspection = "query { __schema { queryType { name } mutationType { name } subscriptionType { name } " +
    "types { name kind description fields { name description args { name type { ...T } } type { ...T } } " +
    "inputFields { name type { ...T } } enumValues { name } } } } " +
    "fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }";

  function renderSchema(schema) {
    var box = $("schema");
    box.textContent = "";
    var roots = [schema.queryType, schema.mutationType, schema.subscriptionType]
      .filter(Boolean).map(function (t) { return t.name; });
    var types = schema.types.filter(function (t) { return t.name.indexOf("__") !== 0; });
    types.sort(function (a, b) {
      var ra = roots.indexOf(a.name), rb = roots.indexOf(b.name);
      if (ra !== rb) return (ra < 0 ? 99 : ra) - (rb < 0 ? 99 : rb);
      return a.name.localeCompare(b.name);
    });
    types.forEach(function (t) {
      var details = element("details");
      if (roots.indexOf(t.name) >= 0) details.open = true;
      var summary = element("summary", t.name + " ");
      summary.appendChild(element("span", t.kind.toLowerCase(), "type"));
      details.appendChild(summary);
      if (t.description) details.appendChild(element("div", t.description));
      var list = element("ul");
      (t.fields || t.inputFields || []).forEach(function (f) {
        var args = (f.args || []).map(function (a) { return a.name + ": " + typeName(a.type); });
        var item = element("li", f.name + (args.length ? "(" + args.join(", ") + ")" : "") + ": " + typeName(f.type));
        if (f.description) item.title = f.description;
        item.addEventListener("click", function () { insert(f.name); });
        list.appendChild(item);
      });
      (t.enumValues || []).forEach(function (v) { list.appendChild(element("li", v.name)); });
      details.appendChild(list);
      box.appendChild(details);
    });
  }

  function insert(text) {
    var area = $("query");
    var start = area.selectionStart, end = area.selectionEnd;
    area.value = area.value.slice(0, start) + text + area.value.slice(end);
    area.selectionStart = area.selectionEnd = start + text.length;
    area.focus();
  }

  $("run").addEventListener("click", run);
  document.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); run(); }
  });
  post({ query: introspection }).then(function (json) {
    if (json.data) renderSchema(json.data.__schema);
    else $("schema").textContent = "Schema unavailable (introspection may be disabled).";
  }).catch(function () { $("schema").textContent = "Schema unavailable."; });
})();

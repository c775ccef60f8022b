#include "api/download_center_page.h"

namespace export_center::api {
namespace {

// Task names are user input: the script only ever assigns textContent, never
// innerHTML, so a name cannot inject markup.
constexpr std::string_view kHtml = R"HTML(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Export center · downloads</title>
<style>
 body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
 textarea { width: 100%; height: 4em; font-family: monospace; }
 table { border-collapse: collapse; width: 100%; margin-top: 1em; }
 th, td { border-bottom: 1px solid #ddd; padding: .4em; text-align: left; }
 progress { width: 8em; }
 #msg { color: #b00; min-height: 1.4em; }
 button { margin-right: .3em; }
</style>
</head>
<body>
<h1>Download center</h1>
<label>Bearer token<br><textarea id="token" placeholder="paste a JWT (export-center token ...)"></textarea></label>
<div><button id="save">Use token</button> auto-refresh every 3 s</div>
<div id="msg"></div>
<table>
 <thead><tr><th>Id</th><th>Name</th><th>Type</th><th>Status</th><th>Progress</th><th>Requested</th><th></th></tr></thead>
 <tbody id="rows"></tbody>
</table>
<script>
"use strict";
const base = "/api/platform/v1/files";
const tokenBox = document.getElementById("token");
tokenBox.value = localStorage.getItem("ecToken") || "";
document.getElementById("save").onclick = () => {
  localStorage.setItem("ecToken", tokenBox.value.trim());
  refresh();
};
function say(text) { document.getElementById("msg").textContent = text || ""; }
async function call(method, path) {
  const res = await fetch(base + path, {
    method, headers: { "Authorization": "Bearer " + (localStorage.getItem("ecToken") || "") }
  });
  const body = await res.json();
  if (body.code !== "200") throw new Error(body.code + ": " + body.message);
  return body.data;
}
function button(label, action) {
  const b = document.createElement("button");
  b.textContent = label;
  b.onclick = async () => {
    try { await action(); say(""); refresh(); } catch (e) { say(e.message); }
  };
  return b;
}
function cell(row, text) {
  const td = document.createElement("td");
  td.textContent = text == null ? "" : text;
  row.appendChild(td);
  return td;
}
function render(tasks) {
  const body = document.getElementById("rows");
  body.replaceChildren();
  for (const t of tasks) {
    const tr = document.createElement("tr");
    cell(tr, t.id); cell(tr, t.taskName); cell(tr, t.exportType);
    cell(tr, t.status + (t.failureMessage ? " – " + t.failureMessage : ""));
    const p = cell(tr, "");
    if (t.progress != null) {
      const bar = document.createElement("progress");
      bar.max = 100; bar.value = t.progress;
      p.appendChild(bar);
      p.appendChild(document.createTextNode(" " + t.progress + "%"));
    } else {
      p.textContent = t.processedRows + " rows";
    }
    cell(tr, t.requestedAt);
    const actions = cell(tr, "");
    if (t.status === "SUCCEEDED") {
      actions.appendChild(button("Download", async () => {
        const d = await call("POST", "/export-tasks/" + t.id + "/download-url");
        window.location.href = d.url;
      }));
    }
    if (["FAILED", "CANCELLED", "STALE", "INCONSISTENT"].includes(t.status)) {
      actions.appendChild(button("Retry", () => call("POST", "/export-tasks/" + t.id + "/retry")));
    }
    if (["PENDING", "RUNNING"].includes(t.status) && !t.cancelRequested) {
      actions.appendChild(button("Cancel", () => call("POST", "/export-tasks/" + t.id + "/cancel")));
    }
    body.appendChild(tr);
  }
}
async function refresh() {
  if (!localStorage.getItem("ecToken")) { say("Paste a token to see your exports."); return; }
  try { render((await call("GET", "/export-tasks?size=50")).records); say(""); }
  catch (e) { say(e.message); }
}
refresh();
setInterval(refresh, 3000);
</script>
</body>
</html>
)HTML";

}  // namespace

std::string_view DownloadCenterHtml() { return kHtml; }

}  // namespace export_center::api

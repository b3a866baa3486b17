// rolloutgym report: tabs, sortable tables, task browser and the lazy trajectory viewer.
// Data comes from the #rg-data JSON element; each group's trajectories are a zlib-compressed,
// base64-encoded JSON blob in its own <script type="application/x-rolloutgym-group"> element,
// expanded only when opened. Everything is built with DOM nodes and textContent (never
// innerHTML with run content), so model output cannot inject markup.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("rg-data").textContent);
  const groupCache = new Map();
  const MAX_TOKENS_SHOWN = 3000;
  const LONG_SYSTEM_PROMPT = 400;

  function h(tag, attributes, ...children) {
    const element = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") element.className = value;
      else if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
      else element.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      element.append(child instanceof Node ? child : String(child));
    }
    return element;
  }
  const fmt = (value, digits = 3) => (value === null || value === undefined || Number.isNaN(value) ? "-" : Number(value).toFixed(digits));
  const pct = (value, digits = 0) => (value === null || value === undefined ? "-" : (100 * value).toFixed(digits) + "%");
  const pretty = (value) => (typeof value === "string" ? value : JSON.stringify(value, null, 2));
  const rateClass = (rate) => (rate >= 1 ? "pass" : rate <= 0 ? "fail" : "mixed");

  // ---- tabs -------------------------------------------------------------------------------
  const tabs = Array.from(document.querySelectorAll("header.top nav button"));
  function showView(id) {
    for (const tab of tabs) tab.setAttribute("aria-selected", String(tab.dataset.view === id));
    for (const view of document.querySelectorAll("section.view")) view.hidden = view.id !== id;
  }
  for (const tab of tabs) tab.addEventListener("click", () => { showView(tab.dataset.view); setHash(tab.dataset.view); });

  // ---- sortable tables --------------------------------------------------------------------
  // columns: [{key, label, value(row) -> sortable, cell(row) -> td}]
  function sortableTable(columns, rows, { onSelect, rowKey, initial } = {}) {
    let sortKey = initial ? initial[0] : null;
    let direction = initial ? initial[1] : 1;
    const headerCells = columns.map((column) => h("th", { scope: "col", "data-key": column.key, title: "Sort by " + column.label }, column.label));
    const body = h("tbody");
    const table = h("table", { class: "sortable rows" }, h("thead", {}, h("tr", {}, headerCells)), body);
    let visible = rows;
    function render() {
      const column = columns.find((candidate) => candidate.key === sortKey);
      let ordered = visible.slice();
      if (column) {
        ordered.sort((a, b) => {
          const x = column.value(a), y = column.value(b);
          return (x < y ? -1 : x > y ? 1 : 0) * direction;
        });
      }
      for (const cell of headerCells) {
        cell.removeAttribute("aria-sort");
        if (cell.dataset.key === sortKey) cell.setAttribute("aria-sort", direction > 0 ? "ascending" : "descending");
      }
      const fragment = document.createDocumentFragment();
      for (const row of ordered) {
        const tr = h("tr", { "data-key": rowKey ? rowKey(row) : null }, columns.map((c) => c.cell(row)));
        if (onSelect) tr.addEventListener("click", () => { for (const other of body.querySelectorAll("tr.selected")) other.classList.remove("selected"); tr.classList.add("selected"); onSelect(row); });
        fragment.append(tr);
      }
      body.replaceChildren(fragment);
    }
    headerCells.forEach((cell, index) => cell.addEventListener("click", () => {
      const key = columns[index].key;
      direction = key === sortKey ? -direction : 1;
      sortKey = key;
      render();
    }));
    render();
    return { table, setRows(newRows) { visible = newRows; render(); }, select(key) {
      const tr = body.querySelector(`tr[data-key="${CSS.escape(key)}"]`);
      if (tr) { for (const other of body.querySelectorAll("tr.selected")) other.classList.remove("selected"); tr.classList.add("selected"); tr.scrollIntoView({ block: "nearest" }); }
    } };
  }

  // ---- groups: lazy expansion -------------------------------------------------------------
  async function loadGroup(runIndex, groupIndex) {
    const key = runIndex + ":" + groupIndex;
    if (groupCache.has(key)) return groupCache.get(key);
    const element = document.getElementById(`rg-blob-${runIndex}-${groupIndex}`);
    if (!element) throw new Error("this report has no trajectories for that task (blob missing)");
    if (typeof DecompressionStream === "undefined") throw new Error("this browser cannot decompress the embedded trajectories (no DecompressionStream); open the report in a current Chrome, Firefox or Safari");
    const binary = atob(element.textContent.trim());
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    const group = JSON.parse(await new Response(stream).text());
    if (groupCache.size > 64) groupCache.delete(groupCache.keys().next().value);
    groupCache.set(key, group);
    return group;
  }

  // ---- conversation rendering -------------------------------------------------------------
  function contentText(content) {
    if (content === null || content === undefined) return "";
    if (typeof content === "string") return content;
    if (Array.isArray(content)) return content.map((part) => (typeof part === "string" ? part : part && part.text !== undefined ? part.text : pretty(part))).join("");
    return pretty(content);
  }
  function renderToolCall(call) {
    const fn = call.function || {};
    const name = call.name !== undefined ? call.name : fn.name;
    let args = call.arguments !== undefined ? call.arguments : fn.arguments;
    if (typeof args === "string") { try { args = JSON.parse(args); } catch (error) { /* keep the raw text */ } }
    return h("div", { class: "tool-call" }, h("span", { class: "tool-name" }, "→ ", name === undefined ? "?" : String(name)), call.id ? h("span", { class: "call-id" }, call.id) : null, renderArguments(args));
  }
  // Long text arguments (code, SQL, a message to the customer) read better as text than as JSON strings.
  function renderArguments(args) {
    const long = (value) => typeof value === "string" && (value.includes("\n") || value.length > 80);
    if (args && typeof args === "object" && !Array.isArray(args) && Object.values(args).some(long)) {
      return h("div", { class: "arguments" }, Object.entries(args).map(([key, value]) =>
        h("div", {}, h("span", { class: "argument-name" }, key), h("pre", {}, long(value) ? value : compactOrPretty(value)))));
    }
    return h("pre", {}, compactOrPretty(args));
  }
  function compactOrPretty(value) {
    const compact = typeof value === "string" ? value : JSON.stringify(value);
    return compact !== undefined && compact.length <= 90 ? compact : pretty(value);
  }
  function renderMessage(message) {
    if (message === null || typeof message !== "object" || Array.isArray(message) || !("role" in message)) {
      if (typeof message === "string") return h("div", { class: "msg role-observation" }, h("div", { class: "role" }, "observation"), h("div", { class: "content" }, message));
      return h("pre", { class: "json" }, pretty(message));
    }
    const text = contentText(message.content);
    const isToolError = message.role === "tool" && /^\s*error\b/i.test(text);
    const roleLabel = [message.role, message.name ? `(${message.name})` : null, message.tool_call_id ? `· result of ${message.tool_call_id}` : null].filter(Boolean).join(" ");
    const extra = Object.fromEntries(Object.entries(message).filter(([key]) => !["role", "content", "tool_calls", "tool_call_id", "name"].includes(key)));
    // Long system prompts are folded: the conversation is what one reads first.
    const folded = message.role === "system" && text.length > LONG_SYSTEM_PROMPT;
    return h("div", { class: `msg role-${message.role}` + (isToolError ? " tool-error" : "") },
      h("div", { class: "role" }, roleLabel),
      folded ? h("details", {}, h("summary", {}, `${text.length} characters: ${text.slice(0, 90)}…`), h("div", { class: "content" }, text))
        : text ? h("div", { class: "content" }, text)
        : (message.tool_calls || []).length ? null : h("div", { class: "content muted" }, "(empty message)"),
      (message.tool_calls || []).map(renderToolCall),
      Object.keys(extra).length ? h("details", {}, h("summary", {}, "other fields"), h("pre", {}, pretty(extra))) : null);
  }
  function renderObservation(observation, afterStep) {
    // A user message that answers a step is a simulated user's turn (conversational envs).
    const render = (message) => {
      if (!afterStep || !message || message.role !== "user") return renderMessage(message);
      const element = renderMessage({ ...message, name: message.name || "simulated user" });
      element.classList.add("simulated-user");
      return element;
    };
    if (Array.isArray(observation)) return observation.map(render);
    if (observation === null || observation === undefined || observation === "") return [];
    return [render(observation)];
  }
  function renderAction(action) {
    if (typeof action === "string") return renderMessage({ role: "assistant", content: action });
    if (action && typeof action === "object" && !Array.isArray(action) && "role" in action) return renderMessage(action);
    return h("div", { class: "msg role-assistant" }, h("div", { class: "role" }, "action"), h("pre", {}, pretty(action)));
  }
  function renderTokens(step) {
    const ids = step.policy_tokens, logprobs = step.policy_logprobs || [];
    const wrap = h("div", { class: "tokens", "data-testid": "tokens" });
    const shown = Math.min(ids.length, MAX_TOKENS_SHOWN);
    let total = 0, lowest = 0;
    for (let i = 0; i < ids.length; i++) { const lp = logprobs[i]; if (lp !== undefined) { total += lp; lowest = Math.min(lowest, lp); } }
    for (let i = 0; i < shown; i++) {
      const lp = logprobs[i];
      const probability = lp === undefined ? null : Math.exp(lp);
      const shade = probability === null ? "transparent" : `rgba(197, 48, 48, ${(0.85 * (1 - probability)).toFixed(3)})`;
      wrap.append(h("span", { class: "tok", style: `background:${shade}`, title: `token ${ids[i]}` + (lp === undefined ? "" : ` · logprob ${lp.toFixed(3)} · p ${probability.toFixed(3)}`) }, String(ids[i])), " ");
    }
    const legend = h("div", { class: "token-legend" }, `${ids.length} sampled tokens` + (logprobs.length ? ` · mean logprob ${(total / logprobs.length).toFixed(3)} · lowest ${lowest.toFixed(3)} · redder = less likely (1 − p)` : " · no logprobs recorded") + (ids.length > shown ? ` · first ${shown} shown` : "") + " · hover a token for its logprob");
    return h("details", { open: true }, h("summary", {}, "sampled tokens, shaded by logprob"), legend, wrap);
  }
  function renderStep(step, index) {
    const flags = [step.terminated ? "terminated" : null, step.truncated ? "truncated" : null, step.policy_stop_reason ? `stop: ${step.policy_stop_reason}` : null].filter(Boolean);
    const info = Object.fromEntries(Object.entries(step.info || {}).filter(([key]) => key !== "score"));
    const policyInfo = Object.fromEntries(Object.entries(step.policy_info || {}).filter(([key]) => key !== "tools"));
    return h("div", { class: "step", "data-step": index },
      h("div", { class: "step-head" }, `step ${index + 1} · reward ${fmt(step.reward)}` + (flags.length ? " · " + flags.join(" · ") : "") + (info.invalid_actions ? ` · invalid actions ${info.invalid_actions}` : "")),
      renderAction(step.action),
      step.policy_tokens ? renderTokens(step) : null,
      renderObservation(step.next_observation, true),
      Object.keys(info).length ? h("details", {}, h("summary", {}, "step info"), h("pre", {}, pretty(info))) : null,
      Object.keys(policyInfo).length ? h("details", {}, h("summary", {}, "policy info"), h("pre", {}, pretty(policyInfo))) : null);
  }
  function componentRows(components, depth, rows) {
    for (const [name, component] of Object.entries(components || {})) {
      const value = component.value;
      const width = Math.max(0, Math.min(1, value)) * 100;
      const colour = value >= 1 ? "var(--pass)" : value <= 0 ? "var(--fail)" : "var(--warn)";
      const metadata = component.metadata && Object.keys(component.metadata).length ? h("details", {}, h("summary", {}, "details"), h("pre", {}, pretty(component.metadata))) : null;
      rows.push(h("tr", { "data-component": name },
        h("td", { style: `padding-left:${10 + depth * 16}px` }, name),
        h("td", {}, h("span", { class: "bar" }, h("i", { style: `width:${width}%;background:${colour}` })), fmt(value)),
        h("td", { class: "feedback-cell" }, component.feedback || "", metadata)));
      componentRows(component.components, depth + 1, rows);
    }
    return rows;
  }
  function renderScore(score, threshold) {
    const passed = score.value >= threshold;
    const rows = componentRows(score.components, 0, []);
    return h("div", { class: "score-box", "data-testid": "score" },
      h("div", { class: "score-head" }, "score", h("span", { class: "value" }, fmt(score.value)), h("span", { class: "badge " + (passed ? "pass" : "fail") }, passed ? "pass" : "fail"), h("span", { class: "muted" }, `threshold ${threshold}`)),
      score.feedback ? h("div", { class: "feedback" }, score.feedback) : null,
      rows.length ? h("table", { class: "components" }, h("thead", {}, h("tr", {}, h("th", {}, "component"), h("th", {}, "value"), h("th", {}, "feedback"))), h("tbody", {}, rows)) : null,
      score.metadata && Object.keys(score.metadata).length ? h("details", { open: JSON.stringify(score.metadata).length < 600 }, h("summary", {}, "score details (state, diffs)"), h("pre", {}, pretty(score.metadata))) : null);
  }
  function renderError(error) {
    return h("div", { class: "error-box", "data-testid": "error" },
      h("div", {}, h("span", { class: "badge error" }, "error"), ` ${error.error_type} in ${error.where}` + (error.step !== null && error.step !== undefined ? ` after ${error.step} completed step${error.step === 1 ? "" : "s"}` : "")),
      h("div", { class: "feedback" }, error.error_message),
      error.traceback ? h("details", {}, h("summary", {}, "traceback"), h("pre", {}, error.traceback)) : null);
  }
  function renderTrajectory(run, group, position) {
    const trajectory = group.trajectories[position];
    const score = group.scores[position];
    const metadata = trajectory.metadata || {};
    return h("div", { class: "trajectory", "data-testid": "trajectory" },
      h("h3", {}, `member ${metadata.member !== undefined ? metadata.member : position}`, h("span", { class: "muted" }, ` · ${trajectory.steps.length} turns · ${trajectory.stop_reason || (trajectory.terminated ? "terminated" : trajectory.truncated ? "truncated" : "unfinished")}` + (metadata.seed !== undefined ? ` · seed ${metadata.seed}` : "") + (metadata.elapsed_seconds !== undefined ? ` · ${Number(metadata.elapsed_seconds).toFixed(2)} s` : ""))),
      renderScore(score, run.header.pass_threshold),
      h("div", { class: "conversation" }, renderObservation(trajectory.initial_observation), trajectory.steps.map(renderStep)),
      h("details", {}, h("summary", {}, "trajectory metadata"), h("pre", {}, pretty({ metadata, initial_info: trajectory.initial_info }))));
  }

  // ---- the task browser of one run ----------------------------------------------------------
  function setHash(value) { history.replaceState(null, "", "#" + value); }

  function buildRun(runIndex) {
    const run = DATA.runs[runIndex];
    const section = document.getElementById(`run-${runIndex}`);
    const detail = section.querySelector(".detail-pane");
    const filterInput = section.querySelector("input.task-filter");
    const outcome = section.querySelector("select.task-outcome");
    const count = section.querySelector(".task-count");
    const columns = [
      { key: "task", label: "task", value: (t) => t.task_id, cell: (t) => h("td", {}, t.task_id) },
      { key: "index", label: "#", value: (t) => t.task_index, cell: (t) => h("td", {}, t.task_index) },
      { key: "n", label: "n", value: (t) => t.trajectories, cell: (t) => h("td", {}, t.trajectories) },
      { key: "pass", label: "pass rate", value: (t) => t.pass_rate, cell: (t) => h("td", { class: rateClass(t.pass_rate) }, pct(t.pass_rate)) },
      { key: "reward", label: "mean reward", value: (t) => t.mean_reward, cell: (t) => h("td", {}, fmt(t.mean_reward)) },
      { key: "turns", label: "turns", value: (t) => t.mean_turns, cell: (t) => h("td", {}, fmt(t.mean_turns, 1)) },
      { key: "errors", label: "errors", value: (t) => t.errors, cell: (t) => h("td", { class: t.errors ? "fail" : "" }, t.errors) },
    ];
    const table = sortableTable(columns, run.tasks, { onSelect: (task) => selectTask(task.group), rowKey: (t) => String(t.group), initial: ["index", 1] });
    section.querySelector(".task-table").append(table.table);
    function applyFilter() {
      const needle = filterInput.value.trim().toLowerCase();
      const mode = outcome.value;
      const rows = run.tasks.filter((task) => (!needle || task.task_id.toLowerCase().includes(needle)) &&
        (mode === "all" || (mode === "failing" && task.pass_rate < 1) || (mode === "passing" && task.pass_rate >= 1 && task.trajectories > 0) || (mode === "errors" && task.errors > 0)));
      table.setRows(rows);
      count.textContent = `${rows.length} of ${run.tasks.length} tasks`;
    }
    filterInput.addEventListener("input", applyFilter);
    outcome.addEventListener("change", applyFilter);
    applyFilter();

    function selectTask(groupIndex, memberPosition) {
      const task = run.tasks[groupIndex];
      table.select(String(groupIndex));
      const viewer = h("div", { class: "viewer" }, h("div", { class: "placeholder" }, "Pick a member above to open its trajectory."));
      const buttons = [];
      task.members.forEach(([member, value, passed, turns, stop], position) => {
        const button = h("button", { class: passed ? "pass" : "fail", "aria-pressed": "false", "data-member": member, title: `score ${fmt(value)} · ${turns} turns · ${stop || ""}` },
          `#${member} ${passed ? "✓" : "✗"} ${fmt(value)} · ${turns}t`);
        button.addEventListener("click", () => openMember(button, () => showTrajectory(position)));
        buttons.push(button);
      });
      task.failed.forEach((error, position) => {
        const button = h("button", { class: "error", "aria-pressed": "false", "data-member": error.member, title: error.message }, `#${error.member === null ? "?" : error.member} error: ${error.type}`);
        button.addEventListener("click", () => openMember(button, () => showFailure(position)));
        buttons.push(button);
      });
      function openMember(button, show) {
        for (const other of buttons) other.setAttribute("aria-pressed", String(other === button));
        show();
      }
      async function withGroup(render) {
        viewer.replaceChildren(h("div", { class: "placeholder" }, "expanding…"));
        try { viewer.replaceChildren(render(await loadGroup(runIndex, groupIndex))); }
        catch (error) { viewer.replaceChildren(h("div", { class: "warning" }, String(error && error.message || error))); }
      }
      function showTrajectory(position) {
        setHash(`run-${runIndex}/task/${groupIndex}/member/${position}`);
        withGroup((group) => renderTrajectory(run, group, position));
      }
      function showFailure(position) {
        setHash(`run-${runIndex}/task/${groupIndex}/error/${position}`);
        withGroup((group) => renderError(group.errors[position]));
      }
      detail.replaceChildren(
        h("h3", { "data-testid": "task-title" }, task.task_id, h("span", { class: "muted" }, ` · task #${task.task_index}`)),
        h("div", { class: "muted" }, `pass rate ${pct(task.pass_rate)} · mean reward ${fmt(task.mean_reward)} · mean turns ${fmt(task.mean_turns, 1)} · ${task.errors} errors`),
        h("div", { class: "members", "data-testid": "members" }, buttons),
        h("details", { class: "task-item" }, h("summary", {}, "task (item)"), h("pre", { class: "item-text" }, "…")),
        viewer);
      detail.querySelector(".task-item").addEventListener("toggle", async (event) => {
        if (!event.target.open) return;
        try { const group = await loadGroup(runIndex, groupIndex); event.target.querySelector("pre").textContent = pretty(group.item); }
        catch (error) { event.target.querySelector("pre").textContent = String(error.message || error); }
      }, { once: true });
      if (memberPosition !== undefined && buttons[memberPosition]) buttons[memberPosition].click();
      else setHash(`run-${runIndex}/task/${groupIndex}`);
    }

    // Error list: a click opens the failed member.
    const errorHolder = section.querySelector(".error-list");
    if (errorHolder && run.errors.length) {
      const errorColumns = [
        { key: "task", label: "task", value: (e) => e.task_id, cell: (e) => h("td", {}, e.task_id) },
        { key: "member", label: "member", value: (e) => e.member === null ? -1 : e.member, cell: (e) => h("td", {}, e.member === null ? "-" : e.member) },
        { key: "where", label: "where", value: (e) => e.where, cell: (e) => h("td", {}, e.where) },
        { key: "type", label: "type", value: (e) => e.type, cell: (e) => h("td", {}, e.type) },
        { key: "message", label: "message", value: (e) => e.message, cell: (e) => h("td", { class: "message" }, e.message) },
      ];
      const errorTable = sortableTable(errorColumns, run.errors, { onSelect: (error) => {
        const task = run.tasks[error.group];
        const position = task.failed.findIndex((candidate) => candidate.member === error.member && candidate.type === error.type);
        selectTask(error.group, task.members.length + Math.max(position, 0));
        detail.scrollIntoView({ block: "nearest" });
      } });
      errorHolder.append(h("div", { class: "scroll", style: "max-height:320px" }, errorTable.table));
    }
    return { selectTask };
  }

  // ---- comparison tables --------------------------------------------------------------------
  function buildComparisons() {
    for (const comparison of DATA.comparisons || []) {
      const holder = document.getElementById(`compare-table-${comparison.id}`);
      if (!holder) continue;
      const delta = (value) => h("td", { class: value > 0 ? "pass" : value < 0 ? "fail" : "" }, value === null ? "-" : (value > 0 ? "+" : "") + (100 * value).toFixed(0) + "%");
      const columns = [
        { key: "task", label: "task", value: (r) => r.task_id, cell: (r) => h("td", {}, r.task_id) },
        { key: "a", label: "pass A", value: (r) => r.pass_a ?? -1, cell: (r) => h("td", {}, pct(r.pass_a)) },
        { key: "b", label: "pass B", value: (r) => r.pass_b ?? -1, cell: (r) => h("td", {}, pct(r.pass_b)) },
        { key: "delta", label: "Δ pass", value: (r) => r.delta_pass ?? -9, cell: (r) => delta(r.delta_pass) },
        { key: "ra", label: "reward A", value: (r) => r.reward_a ?? -1e9, cell: (r) => h("td", {}, fmt(r.reward_a)) },
        { key: "rb", label: "reward B", value: (r) => r.reward_b ?? -1e9, cell: (r) => h("td", {}, fmt(r.reward_b)) },
        { key: "dr", label: "Δ reward", value: (r) => r.delta_reward ?? -1e9, cell: (r) => h("td", { class: r.delta_reward > 0 ? "pass" : r.delta_reward < 0 ? "fail" : "" }, r.delta_reward === null ? "-" : (r.delta_reward > 0 ? "+" : "") + fmt(r.delta_reward)) },
      ];
      holder.append(h("div", { class: "scroll", style: "max-height:420px" }, sortableTable(columns, comparison.rows, { initial: ["delta", 1] }).table));
    }
  }

  const browsers = DATA.runs.map((run, index) => buildRun(index));
  buildComparisons();

  // Deep links: #run-0/task/3/member/1 opens that trajectory.
  function followHash() {
    const match = /^#(run-(\d+)|compare|training)(?:\/task\/(\d+)(?:\/(member|error)\/(\d+))?)?$/.exec(location.hash);
    if (!match) { showView(tabs.length ? tabs[0].dataset.view : "run-0"); return; }
    if (match[1] === "compare" || match[1] === "training") { showView(match[1]); return; }
    const runIndex = Number(match[2]);
    if (!browsers[runIndex]) return;
    showView(`run-${runIndex}`);
    if (match[3] === undefined || !DATA.runs[runIndex].tasks[Number(match[3])]) return;
    const groupIndex = Number(match[3]);
    const offset = match[4] === "error" ? DATA.runs[runIndex].tasks[groupIndex].members.length : 0;
    browsers[runIndex].selectTask(groupIndex, match[5] === undefined ? undefined : offset + Number(match[5]));
    document.querySelector(`#run-${runIndex} .browser`).scrollIntoView({ block: "start" });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", followHash);
  else followHash();
})();

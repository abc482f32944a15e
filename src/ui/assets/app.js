// kubesched apiserver --ui: a live view of the test bed over its own REST API (list, then watch;
// re-list when the watch ends or its resourceVersion is gone). No framework, nothing from the
// network but this server, and every value inserted as text (textContent, setAttribute).
(function () {
  'use strict';

  var PLUGIN_RESULTS = 'scheduler.kubesched.io/plugin-results';
  var CONFIG_PATH = '/api/v1/namespaces/kube-system/configmaps';
  var CONFIG_SELECTOR = 'fieldSelector=' + encodeURIComponent('metadata.name=kubesched-scheduler-config');

  var state = {
    nodes: new Map(),   // name → Node
    pods: new Map(),    // ns/name → Pod
    config: new Map(),  // the scheduler's ConfigMap (0 or 1)
    selected: null,     // ns/name of the pod shown in the details
    shownVersion: null  // resourceVersion of the selected pod when its details were drawn
  };

  // ---- DOM helpers: text only ----
  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === undefined || v === null || v === false) return;
        if (k === 'text') e.textContent = String(v);
        else if (k === 'className') e.className = v;
        else e.setAttribute(k, String(v));
      });
    }
    (children || []).forEach(function (c) {
      if (c === null || c === undefined) return;
      e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    });
    return e;
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }
  function $(id) { return document.getElementById(id); }
  function podKey(p) { return (p.metadata.namespace || 'default') + '/' + p.metadata.name; }
  function sleep(ms) { return new Promise(function (r) { setTimeout(r, ms); }); }

  // ---- quantities ----
  var SUFFIX = {n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
    Ki: 1024, Mi: Math.pow(1024, 2), Gi: Math.pow(1024, 3), Ti: Math.pow(1024, 4), Pi: Math.pow(1024, 5), Ei: Math.pow(1024, 6)};
  function quantity(s) {
    if (s === undefined || s === null) return 0;
    var m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/.exec(String(s).trim());
    if (!m || !(m[2] in SUFFIX)) return 0;
    return parseFloat(m[1]) * SUFFIX[m[2]];
  }
  function fmtCpu(v) { return v >= 1 && Math.abs(v - Math.round(v)) < 1e-9 ? String(Math.round(v)) : Math.round(v * 1000) + 'm'; }
  function fmtMem(v) {
    var units = ['', 'Ki', 'Mi', 'Gi', 'Ti'];
    var i = 0;
    while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (Math.round(v * 10) / 10) + units[i];
  }

  // A pod's requests as the scheduler counts them: max(sum of containers, each init container) + overhead.
  function podRequests(p) {
    var spec = p.spec || {};
    var sum = {cpu: 0, memory: 0};
    (spec.containers || []).forEach(function (c) {
      var r = (c.resources && c.resources.requests) || {};
      sum.cpu += quantity(r.cpu); sum.memory += quantity(r.memory);
    });
    (spec.initContainers || []).forEach(function (c) {
      var r = (c.resources && c.resources.requests) || {};
      sum.cpu = Math.max(sum.cpu, quantity(r.cpu)); sum.memory = Math.max(sum.memory, quantity(r.memory));
    });
    var o = spec.overhead || {};
    sum.cpu += quantity(o.cpu); sum.memory += quantity(o.memory);
    return sum;
  }
  function terminal(p) { var ph = p.status && p.status.phase; return ph === 'Succeeded' || ph === 'Failed'; }
  function colorOf(key) {
    var h = 0;
    for (var i = 0; i < key.length; i++) h = (h * 31 + key.charCodeAt(i)) >>> 0;
    return 'c' + (h % 12);
  }

  // ---- list + watch ----
  async function listWatch(path, query, store, keyOf) {
    var q = query ? query + '&' : '';
    for (;;) {
      try {
        var resp = await fetch(path + (query ? '?' + query : ''), {headers: {Accept: 'application/json'}});
        if (!resp.ok) throw new Error('list ' + path + ': HTTP ' + resp.status);
        var list = await resp.json();
        store.clear();
        (list.items || []).forEach(function (o) { store.set(keyOf(o), o); });
        changed();
        var rv = list.metadata && list.metadata.resourceVersion;
        var w = await fetch(path + '?' + q + 'watch=1&allowWatchBookmarks=true&resourceVersion=' + encodeURIComponent(rv || ''));
        if (w.status === 410) continue;
        if (!w.ok || !w.body) throw new Error('watch ' + path + ': HTTP ' + w.status);
        setStatus('live', 'live');
        await readEvents(w.body.getReader(), store, keyOf);
      } catch (e) {
        setStatus('error', String(e.message || e) + ' (retrying)');
        await sleep(1000);
      }
    }
  }

  // Applies watch events until the stream ends or reports an error (410 Gone: re-list).
  async function readEvents(reader, store, keyOf) {
    var decoder = new TextDecoder();
    var buffer = '';
    for (;;) {
      var chunk = await reader.read();
      if (chunk.done) return;
      buffer += decoder.decode(chunk.value, {stream: true});
      var nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        var line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (!line) continue;
        var ev = JSON.parse(line);
        if (ev.type === 'ERROR') { reader.cancel(); return; }
        if (ev.type === 'BOOKMARK') continue;
        if (ev.type === 'DELETED') store.delete(keyOf(ev.object));
        else store.set(keyOf(ev.object), ev.object);
        changed();
      }
    }
  }

  function setStatus(kind, text) {
    var s = $('status');
    s.setAttribute('data-state', kind);
    s.textContent = text;
  }

  var pending = false;
  function changed() {
    if (pending) return;
    pending = true;
    setTimeout(function () { pending = false; render(); }, 0);
  }

  // ---- rendering ----
  function render() {
    renderNodes();
    renderPending();
    renderConfig();
    var p = state.selected && state.pods.get(state.selected);
    var version = p ? p.metadata.resourceVersion : null;
    if (version !== state.shownVersion) renderDetails();
  }

  function podChip(p) {
    var key = podKey(p);
    var terminating = !!p.metadata.deletionTimestamp;
    var chip = el('li', {className: 'pod' + (key === state.selected ? ' selected' : '') + (terminating ? ' terminating' : ''),
      'data-pod': key, tabindex: 0, title: key + (terminating ? ' (terminating)' : '')},
    [el('span', {className: 'sw ' + colorOf(key)}), p.metadata.name + (terminating ? ' (terminating)' : '')]);
    chip.addEventListener('click', function () { select(key); });
    chip.addEventListener('keydown', function (e) { if (e.key === 'Enter') select(key); });
    return chip;
  }

  function roomRow(label, used, alloc, fmt, pods, share) {
    var over = used > alloc + 1e-9;
    var bar = el('div', {className: 'bar'});
    pods.forEach(function (p) {
      var v = share(p);
      if (alloc <= 0 || v <= 0) return;
      var seg = el('i', {className: colorOf(podKey(p)), title: podKey(p) + ': ' + fmt(v)});
      // Through the CSSOM: a style attribute is inline style, which the page's CSP refuses.
      seg.style.width = Math.min(100, 100 * v / alloc).toFixed(2) + '%';
      bar.appendChild(seg);
    });
    var free = alloc - used;
    return el('div', {className: 'room' + (over ? ' over' : ''), 'data-resource': label, 'data-free': free}, [
      el('span', {className: 'k', text: label}), bar,
      el('span', {className: 'v', text: fmt(used) + ' / ' + fmt(alloc) + ' (free ' + fmt(free) + ')'})]);
  }

  function nodeCard(n, pods) {
    var st = n.status || {};
    var alloc = st.allocatable || st.capacity || {};
    var reqs = pods.map(podRequests);
    var used = {cpu: 0, memory: 0};
    reqs.forEach(function (r) { used.cpu += r.cpu; used.memory += r.memory; });
    var spec = n.spec || {};
    var labels = (n.metadata.labels) || {};
    var card = el('div', {className: 'card node' + (spec.unschedulable ? ' unsched' : ''), 'data-node': n.metadata.name}, [
      el('h3', {text: n.metadata.name + (spec.unschedulable ? ' (cordoned)' : '')}),
      el('div', {className: 'lbl', text: Object.keys(labels).filter(function (k) { return k.indexOf('kubernetes.io/hostname') < 0; })
        .map(function (k) { return k + '=' + labels[k]; }).join(' ')})]);
    (spec.taints || []).forEach(function (t) {
      card.appendChild(el('div', {className: 'taint', text: 'taint ' + t.key + (t.value ? '=' + t.value : '') + ':' + t.effect}));
    });
    var idx = new Map();
    pods.forEach(function (p, i) { idx.set(p, reqs[i]); });
    card.appendChild(roomRow('cpu', used.cpu, quantity(alloc.cpu), fmtCpu, pods, function (p) { return idx.get(p).cpu; }));
    card.appendChild(roomRow('memory', used.memory, quantity(alloc.memory), fmtMem, pods, function (p) { return idx.get(p).memory; }));
    card.appendChild(roomRow('pods', pods.length, quantity(alloc.pods), String, pods, function () { return 1; }));
    var list = el('ul', {className: 'pods'});
    pods.forEach(function (p) { list.appendChild(podChip(p)); });
    if (!pods.length) list.appendChild(el('li', {className: 'note', text: 'no pods'}));
    card.appendChild(list);
    return card;
  }

  function renderNodes() {
    var byNode = new Map();
    state.pods.forEach(function (p) {
      var node = p.spec && p.spec.nodeName;
      if (!node || terminal(p)) return;
      if (!byNode.has(node)) byNode.set(node, []);
      byNode.get(node).push(p);
    });
    var box = $('nodes');
    clear(box);
    Array.from(state.nodes.keys()).sort().forEach(function (name) {
      var pods = (byNode.get(name) || []).sort(function (a, b) { return podKey(a) < podKey(b) ? -1 : 1; });
      box.appendChild(nodeCard(state.nodes.get(name), pods));
    });
    $('node-count').textContent = state.nodes.size + ' node(s)';
  }

  function scheduledCondition(p) {
    return ((p.status && p.status.conditions) || []).filter(function (c) { return c.type === 'PodScheduled'; })[0];
  }

  function renderPending() {
    var box = $('pending');
    clear(box);
    var pods = Array.from(state.pods.values()).filter(function (p) { return !(p.spec && p.spec.nodeName) && !terminal(p); })
      .sort(function (a, b) { return podKey(a) < podKey(b) ? -1 : 1; });
    pods.forEach(function (p) {
      var c = scheduledCondition(p);
      var li = el('li', {'data-pending': podKey(p)}, [el('ul', {className: 'pods'}, [podChip(p)])]);
      li.appendChild(el('span', {className: c && c.message ? 'msg' : 'note',
        text: c && c.message ? c.message : (c ? c.reason || '' : 'not tried yet')}));
      box.appendChild(li);
    });
    if (!pods.length) box.appendChild(el('li', {className: 'note', text: 'none'}));
    $('pending-count').textContent = pods.length ? pods.length + ' pod(s)' : '';
  }

  // ---- pod details ----
  function select(key) {
    state.selected = key;
    state.shownVersion = null;
    render();
  }

  function kv(pairs) {
    var dl = el('dl', {className: 'kv'});
    pairs.forEach(function (p) {
      if (p[1] === undefined || p[1] === null || p[1] === '') return;
      dl.appendChild(el('dt', {text: p[0]}));
      dl.appendChild(el('dd', {text: p[1]}));
    });
    return dl;
  }

  function table(headers, rows, attrs) {
    var t = el('table', attrs);
    t.appendChild(el('thead', null, [el('tr', null, headers.map(function (h) { return el('th', {text: h}); }))]));
    var body = el('tbody');
    rows.forEach(function (r) { body.appendChild(el('tr', null, r.map(function (c) { return el('td', {text: c}); }))); });
    t.appendChild(body);
    return t;
  }

  function renderDetails() {
    var box = $('pod-details');
    clear(box);
    var p = state.selected && state.pods.get(state.selected);
    $('details-empty').hidden = !!p;
    state.shownVersion = p ? p.metadata.resourceVersion : null;
    if (!p) {
      if (state.selected) box.appendChild(el('p', {className: 'note', text: state.selected + ' was deleted'}));
      return;
    }
    var key = podKey(p);
    var st = p.status || {};
    box.setAttribute('data-pod', key);
    box.appendChild(el('h3', {text: key}));
    var req = podRequests(p);
    box.appendChild(kv([['phase', st.phase], ['node', p.spec.nodeName || '(pending)'], ['scheduler', p.spec.schedulerName],
      ['nominated node', st.nominatedNodeName], ['priority', p.spec.priority], ['requests', 'cpu ' + fmtCpu(req.cpu) + ', memory ' + fmtMem(req.memory)],
      ['created', p.metadata.creationTimestamp]]));
    var ann = p.metadata.annotations || {};
    var annKeys = Object.keys(ann).filter(function (k) { return k !== PLUGIN_RESULTS; }).sort();
    if (annKeys.length) {
      box.appendChild(el('h4', {text: 'Annotations'}));
      box.appendChild(table(['key', 'value'], annKeys.map(function (k) { return [k, ann[k]]; }), {id: 'annotations'}));
    }
    box.appendChild(el('h4', {text: 'Conditions'}));
    box.appendChild(table(['type', 'status', 'reason', 'message', 'since'], (st.conditions || []).map(function (c) {
      return [c.type, c.status, c.reason || '', c.message || '', c.lastTransitionTime || ''];
    }), {id: 'conditions'}));
    box.appendChild(el('h4', {text: 'Per-plugin results'}));
    box.appendChild(pluginResults(ann[PLUGIN_RESULTS]));
    box.appendChild(el('h4', {text: 'Events'}));
    var events = el('div', {id: 'events'}, [el('p', {className: 'note', text: 'loading…'})]);
    box.appendChild(events);
    loadEvents(p, events);
  }

  async function loadEvents(p, box) {
    var ns = p.metadata.namespace || 'default';
    var url = '/api/v1/namespaces/' + encodeURIComponent(ns) + '/events?fieldSelector=' +
      encodeURIComponent('involvedObject.name=' + p.metadata.name);
    try {
      var resp = await fetch(url, {headers: {Accept: 'application/json'}});
      if (!resp.ok) throw new Error('HTTP ' + resp.status);
      var list = await resp.json();
      var items = (list.items || []).filter(function (e) {
        return !e.involvedObject || !e.involvedObject.kind || e.involvedObject.kind === 'Pod';
      });
      items.sort(function (a, b) { return String(a.lastTimestamp || a.eventTime || '') < String(b.lastTimestamp || b.eventTime || '') ? -1 : 1; });
      clear(box);
      if (!items.length) { box.appendChild(el('p', {className: 'note', text: 'no events'})); return; }
      box.appendChild(el('div', {className: 'scroll'}, [table(['last seen', 'type', 'reason', 'from', 'count', 'message'], items.map(function (e) {
        var from = e.reportingComponent || (e.source && e.source.component) || '';
        return [e.lastTimestamp || e.eventTime || '', e.type || '', e.reason || '', from, String(e.count || 1), e.message || ''];
      }))]));
    } catch (err) {
      clear(box);
      box.appendChild(el('p', {className: 'rej', text: 'events: ' + (err.message || err)}));
    }
  }

  // The annotation scheduler.kubesched.io/plugin-results as a table: nodes × (filter plugins,
  // score plugins, total).
  function pluginResults(text) {
    var box = el('div', {id: 'plugin-results'});
    if (!text) {
      box.appendChild(el('p', {className: 'note', text: 'none recorded (kubesched run --record-plugin-results records them)'}));
      return box;
    }
    var r;
    try { r = JSON.parse(text); } catch (e) {
      box.appendChild(el('p', {className: 'rej', text: 'not JSON: ' + e.message}));
      box.appendChild(el('pre', {text: text}));
      return box;
    }
    box.setAttribute('data-result', r.result || '');
    box.appendChild(kv([['profile', r.profile], ['result', r.result], ['selected node', r.selectedNode], ['message', r.message],
      ['preFilter', r.preFilter], ['recorded', r.time], ['nodes left out', r.truncatedNodes ? String(r.truncatedNodes) : '']]));
    var filters = r.filterPlugins || [];
    var scores = r.scorePlugins || [];
    var head = el('tr', null, [el('th', {text: 'node'})]);
    filters.forEach(function (f) { head.appendChild(el('th', {'data-plugin': f, 'data-point': 'filter', text: f})); });
    scores.forEach(function (s) {
      head.appendChild(el('th', {'data-plugin': s.name, 'data-point': 'score', text: s.name + ' ×' + s.weight}));
    });
    head.appendChild(el('th', {text: 'total'}));
    var body = el('tbody');
    (r.nodes || []).forEach(function (n) { body.appendChild(pluginRow(n, r, filters, scores)); });
    box.appendChild(el('div', {className: 'scroll'}, [el('table', {className: 'plugins'}, [el('thead', null, [head]), body])]));
    (r.notes || []).forEach(function (n) {
      box.appendChild(el('p', {className: 'note', 'data-plugin': n.plugin, text: n.plugin + ': ' + n.text}));
    });
    return box;
  }

  function pluginRow(n, r, filters, scores) {
    var tr = el('tr', {'data-node': n.name, className: n.name === r.selectedNode ? 'sel' : null,
      'data-feasible': String(!!n.feasible)}, [el('td', {text: n.name + (n.name === r.selectedNode ? ' (selected)' : '')})]);
    var failed = n.filter || {};
    if (n.excluded) {
      tr.appendChild(el('td', {className: 'rej', colspan: Math.max(1, filters.length), text: n.excluded}));
    } else {
      filters.forEach(function (f) {
        var reason = failed[f];
        tr.appendChild(el('td', {'data-plugin': f, className: reason === undefined ? 'ok' : 'rej',
          text: reason === undefined ? '✓' : String(reason || 'rejected')}));
      });
    }
    var sc = n.score || {};
    scores.forEach(function (s) {
      var v = sc[s.name];
      tr.appendChild(el('td', {'data-plugin': s.name, className: 'n',
        title: v ? 'raw ' + v.raw + ', normalized ' + v.normalized + ', weighted ' + v.weighted : null,
        text: v ? v.normalized + '×' + s.weight + ' = ' + v.weighted : ''}));
    });
    tr.appendChild(el('td', {className: 'n', 'data-total': '', text: n.total === undefined || n.total === null ? '' : String(n.total)}));
    return tr;
  }

  // ---- the scheduler's configuration ----
  function renderConfig() {
    var box = $('config');
    clear(box);
    var cm = Array.from(state.config.values())[0];
    if (!cm) {
      box.setAttribute('data-published', 'false');
      box.appendChild(el('p', {className: 'note', text: 'not published (kube-system/kubesched-scheduler-config is absent)'}));
      return;
    }
    box.setAttribute('data-published', 'true');
    var data = cm.data || {};
    Object.keys(data).sort(function (a, b) { return a === 'profiles.json' ? -1 : b === 'profiles.json' ? 1 : a < b ? -1 : 1; })
      .forEach(function (k) {
        var text = data[k];
        if (/\.json$/.test(k)) {
          try { text = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* shown as written */ }
        }
        box.appendChild(el('h4', {text: k}));
        box.appendChild(el('pre', {'data-key': k, text: text}));
      });
  }

  // ---- manifests ----
  async function submit(action) {
    var out = $('apply-result');
    out.removeAttribute('data-ok');
    out.textContent = action === 'apply' ? 'creating…' : 'deleting…';
    try {
      var resp = await fetch('/ui/' + action, {method: 'POST', headers: {'Content-Type': 'text/plain; charset=utf-8'},
        body: $('manifest').value});
      var answer = await resp.json();
      clear(out);
      out.setAttribute('data-ok', String(resp.ok));
      out.setAttribute('data-status', String(resp.status));
      if (!resp.ok) {
        var e = answer.error || {};
        out.appendChild(el('p', {text: 'HTTP ' + resp.status + (e.document ? ' — ' + e.document : '') + ': ' + (e.message || '')}));
        if (e.fields && e.fields.length) out.appendChild(el('p', {className: 'note', text: 'fields: ' + e.fields.join(', ')}));
        return;
      }
      var done = answer.created || answer.deleted || [];
      var ul = el('ul');
      done.forEach(function (o) {
        ul.appendChild(el('li', {text: (answer.created ? 'created ' : 'deleted ') + o.kind + ' ' +
          (o.namespace ? o.namespace + '/' : '') + o.name}));
      });
      out.appendChild(ul);
      // A scenario's KubeSchedulerConfiguration: not applied (the running scheduler keeps its own).
      (answer.skipped || []).forEach(function (o) {
        out.appendChild(el('p', {className: 'note', 'data-skipped': o.kind, text: 'skipped ' + o.kind +
          (o.source ? ' (' + o.source + ')' : '') + ': ' + (o.reason || '')}));
      });
    } catch (err) {
      out.setAttribute('data-ok', 'false');
      out.textContent = String(err.message || err);
    }
  }

  // ---- scenarios: saved by the link to /ui/scenario, loaded into the text area ----
  function loadScenario(input) {
    var file = input.files && input.files[0];
    if (!file) return;
    var note = $('load-note');
    var reader = new FileReader();
    reader.onload = function () {
      $('manifest').value = String(reader.result);
      note.textContent = 'loaded ' + file.name + ': press Create to create its objects';
      input.value = '';
    };
    reader.onerror = function () { note.textContent = 'could not read ' + file.name + ': ' + reader.error; };
    reader.readAsText(file);
  }

  document.addEventListener('DOMContentLoaded', function () {
    $('create').addEventListener('click', function () { submit('apply'); });
    $('load-scenario').addEventListener('change', function (e) { loadScenario(e.target); });
    $('delete').addEventListener('click', function () { submit('delete'); });
    render();
    // Events are not watched: the selected pod's are read again every few seconds.
    setInterval(function () {
      var p = state.selected && state.pods.get(state.selected);
      var box = $('events');
      if (p && box) loadEvents(p, box);
    }, 3000);
    listWatch('/api/v1/nodes', '', state.nodes, function (n) { return n.metadata.name; });
    listWatch('/api/v1/pods', '', state.pods, podKey);
    listWatch(CONFIG_PATH, CONFIG_SELECTOR, state.config, function (c) { return c.metadata.name; });
  });
})();

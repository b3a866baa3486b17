"""Markup that a MiniWoB++ page inserts cannot run script: the HTML sinks sanitise what they get.

Some task pages echo what the agent typed through ``innerHTML`` (``terminal`` writes the command
line with it, jQuery's ``.html()``/``.append()`` and ``$(string)`` parse strings the same way),
so typed text such as ``<img src=x onerror=core.endEpisode(1)>`` would run the page's own
JavaScript and forge the reward. :data:`SANITIZE_JS` runs in every task page before the
page's scripts (``page.add_init_script``) and replaces the sinks through which a string becomes
markup (``innerHTML``/``outerHTML`` of elements and shadow roots, ``insertAdjacentHTML``,
``Range.createContextualFragment``, ``setHTMLUnsafe``, ``document.write``/``writeln``): the
string is parsed in an inert ``<template>`` (nothing loads, no handler runs), then elements that
run or load code (``script``, ``iframe``, ``frame``, ``object``, ``embed``, ``base``, ``meta``,
``link``) are removed, and so are event-handler attributes (``on*``), ``srcdoc``, and URLs with a
``javascript:``/``vbscript:`` scheme (a ``data:`` image cannot run script, and the frames that
could load a ``data:`` document are removed); the cleaned nodes are inserted as nodes (no second
parse). The task pages' own markup uses none of these through the sinks (their handlers are
attached with jQuery or ``addEventListener``), so every task plays as before; this is checked
by the scripted oracles and ``benchmarks/miniwob_pass.py``.
"""

from __future__ import annotations

__all__ = ["SANITIZE_JS"]

SANITIZE_JS = r"""(() => {
  if (window.__rolloutgymSanitized) return;
  Object.defineProperty(window, '__rolloutgymSanitized', {value: true});
  const E = Element.prototype, S = ShadowRoot.prototype, D = Document.prototype, R = Range.prototype;
  const innerE = Object.getOwnPropertyDescriptor(E, 'innerHTML');
  const outerE = Object.getOwnPropertyDescriptor(E, 'outerHTML');
  const innerS = Object.getOwnPropertyDescriptor(S, 'innerHTML');
  const adjacent = E.insertAdjacentHTML, write = D.write;
  const contextual = R.createContextualFragment;
  const create = D.createElement, append = Node.prototype.appendChild, remove = E.remove;
  const BAD = new Set(['script', 'iframe', 'frame', 'frameset', 'object', 'embed', 'base', 'meta', 'link',
                       'portal']);
  const URLS = new Set(['href', 'src', 'action', 'formaction', 'data', 'xlink:href', 'background', 'poster',
                        'codebase', 'cite', 'lowsrc', 'dynsrc', 'ping', 'srcset', 'to', 'from', 'values', 'by']);
  function clean(root) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    const drop = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (BAD.has(node.localName.toLowerCase())) { drop.push(node); continue; }
      for (const attribute of Array.from(node.attributes)) {
        const name = attribute.name.toLowerCase();
        const value = attribute.value.replace(/[\u0000-\u0020\u007f-\u00a0]/g, '').toLowerCase();
        if (name.startsWith('on') || name === 'srcdoc'
            || (URLS.has(name) || name.endsWith(':href')) && /(javascript|vbscript):/.test(value)) {
          node.removeAttribute(attribute.name);
        }
      }
    }
    for (const node of drop) remove.call(node);
    return root;
  }
  function fragment(html, context) {
    const template = create.call(document, 'template');
    const foreign = context && context.namespaceURI && context.namespaceURI !== 'http://www.w3.org/1999/xhtml';
    innerE.set.call(template, foreign ? '<svg>' + String(html) + '</svg>' : String(html));
    const content = clean(template.content);
    if (!foreign) return content;
    const result = document.createDocumentFragment();
    const wrapper = content.firstChild;
    while (wrapper && wrapper.firstChild) append.call(result, wrapper.firstChild);
    return result;
  }
  function replaceChildren(target, html) {
    const nodes = fragment(html, target.host || target);
    while (target.firstChild) target.removeChild(target.firstChild);
    const inner = target.content instanceof DocumentFragment ? target.content : target;
    append.call(inner, nodes);
  }
  Object.defineProperty(E, 'innerHTML', {configurable: true, enumerable: innerE.enumerable, get: innerE.get,
    set(html) { replaceChildren(this, html); }});
  Object.defineProperty(S, 'innerHTML', {configurable: true, enumerable: innerS.enumerable, get: innerS.get,
    set(html) { replaceChildren(this, html); }});
  Object.defineProperty(E, 'outerHTML', {configurable: true, enumerable: outerE.enumerable, get: outerE.get,
    set(html) { if (this.parentNode) this.parentNode.replaceChild(fragment(html, this.parentNode), this); }});
  E.insertAdjacentHTML = function (position, html) {
    const where = String(position).toLowerCase();
    const context = where === 'beforebegin' || where === 'afterend' ? this.parentNode : this;
    const nodes = fragment(html, context);
    ({beforebegin: () => this.before(nodes), afterbegin: () => this.prepend(nodes),
      beforeend: () => this.append(nodes), afterend: () => this.after(nodes)})[where]?.()
      ?? adjacent.call(this, position, '');
  };
  R.createContextualFragment = function (html) {
    return fragment(html, this.startContainer && this.startContainer.nodeType === 1 ? this.startContainer : null);
  };
  if (E.setHTMLUnsafe) E.setHTMLUnsafe = function (html) { replaceChildren(this, html); };
  if (S.setHTMLUnsafe) S.setHTMLUnsafe = function (html) { replaceChildren(this, html); };
  D.write = function (...parts) {
    if (this.readyState === 'loading') return write.apply(this, parts);  // the page's own source, while it loads
    (this.body || this.documentElement).append(fragment(parts.join(''), this.body));
  };
  D.writeln = function (...parts) { D.write.call(this, ...parts, '\n'); };
})();
"""

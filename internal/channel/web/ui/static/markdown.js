// homard web UI: the Markdown subset, built from DOM nodes.
//
// Input is untrusted (model output, tool output, stored transcripts). It is
// never parsed as HTML: every character ends up in a text node or in the
// textContent of an element this file creates. Links are made only for
// absolute http(s) URLs; images are never loaded (loading one would send
// data to whoever chose the URL): they show as "[image: alt] URL".
//
// It defines window.homardMarkdown(text) → a <div class="md"> element,
// read-only, used by app.js and checked by the browser tests.
"use strict";

(function () {
  const t = window.homardLang.t; // the page's language (lang.js)

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // safeURL returns the URL when it is absolute http(s), else "".
  function safeURL(raw) {
    try {
      const u = new URL(raw);
      if (u.protocol === "http:" || u.protocol === "https:") return u.href;
    } catch (e) { /* not a URL */ }
    return "";
  }

  const reImage = /^!\[([^\]\n]*)\]\(([^)\s]*)\)/;
  const reLink = /^\[([^\]\n]+)\]\(([^)\s]+)\)/;

  // inline appends the inline Markdown of s to parent.
  function inline(parent, s) {
    let text = "";
    function flush() { if (text) { parent.appendChild(document.createTextNode(text)); text = ""; } }
    let i = 0;
    while (i < s.length) {
      const c = s[i];
      if (c === "`") {
        const j = s.indexOf("`", i + 1);
        if (j > i + 1) { flush(); parent.appendChild(el("code", null, s.slice(i + 1, j))); i = j + 1; continue; }
      }
      if (c === "!" && s[i + 1] === "[") {
        const m = reImage.exec(s.slice(i));
        if (m) {
          // Never an <img>: loading it would send data to whoever chose the URL.
          flush();
          parent.appendChild(el("span", "image", t("[image: %s] %s", m[1], m[2])));
          i += m[0].length; continue;
        }
      }
      if (c === "[") {
        const m = reLink.exec(s.slice(i));
        if (m) {
          const href = safeURL(m[2]);
          flush();
          if (href) {
            const a = el("a", null, m[1]);
            a.href = href;
            a.rel = "noopener noreferrer";
            a.target = "_blank";
            parent.appendChild(a);
            if (m[1] !== m[2]) parent.appendChild(el("span", "url", " <" + href + ">"));
          } else {
            parent.appendChild(document.createTextNode(m[0]));
          }
          i += m[0].length; continue;
        }
      }
      // Emphasis: **bold** and *italic*, within one line; "_" stays text,
      // so identifiers such as __proto__ or snake_case read as written.
      if (c === "*" && s[i + 1] === "*") {
        const j = s.indexOf("**", i + 2);
        if (j > i + 2 && s.slice(i + 2, j).indexOf("\n") < 0) { flush(); const b = el("strong"); inline(b, s.slice(i + 2, j)); parent.appendChild(b); i = j + 2; continue; }
      }
      if (c === "*" && s[i + 1] && s[i + 1] !== " " && s[i + 1] !== "*") {
        const j = s.indexOf("*", i + 1);
        if (j > i + 1 && s[j - 1] !== " " && s.slice(i + 1, j).indexOf("\n") < 0) { flush(); const em = el("em"); inline(em, s.slice(i + 1, j)); parent.appendChild(em); i = j + 1; continue; }
      }
      text += c;
      i++;
    }
    flush();
  }

  // markdown renders s into a new container element.
  function markdown(s) {
    const root = el("div", "md");
    const lines = String(s).replace(/\r\n?/g, "\n").split("\n");
    let para = [];
    let list = null;
    function endPara() {
      if (para.length) { const p = el("p"); inline(p, para.join("\n")); root.appendChild(p); para = []; }
    }
    function endList() { list = null; }
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i];
      const fence = /^\s*(```|~~~)(.*)$/.exec(l);
      if (fence) {
        endPara(); endList();
        const body = [];
        i++;
        while (i < lines.length && lines[i].trim().indexOf(fence[1]) !== 0) { body.push(lines[i]); i++; }
        const pre = el("pre", "code");
        const code = el("code", null, body.join("\n"));
        const lang = fence[2].trim();
        if (lang) pre.setAttribute("data-lang", lang.slice(0, 20));
        pre.appendChild(code);
        root.appendChild(pre);
        continue;
      }
      const h = /^(#{1,6})\s+(.*)$/.exec(l);
      if (h) {
        endPara(); endList();
        const level = Math.min(6, h[1].length + 2);
        const he = el("h" + level);
        inline(he, h[2]);
        root.appendChild(he);
        continue;
      }
      const ul = /^\s*[-*+]\s+(.*)$/.exec(l);
      const ol = /^\s*\d{1,9}[.)]\s+(.*)$/.exec(l);
      if (ul || ol) {
        endPara();
        const tag = ul ? "ul" : "ol";
        if (!list || list.tagName.toLowerCase() !== tag) { list = el(tag); root.appendChild(list); }
        const li = el("li");
        inline(li, (ul || ol)[1]);
        list.appendChild(li);
        continue;
      }
      const q = /^>\s?(.*)$/.exec(l);
      if (q) {
        endPara(); endList();
        const bq = el("blockquote");
        inline(bq, q[1]);
        root.appendChild(bq);
        continue;
      }
      if (l.trim() === "") { endPara(); endList(); continue; }
      endList();
      para.push(l);
    }
    endPara();
    return root;
  }

  Object.defineProperty(window, "homardMarkdown", { value: markdown, writable: false, configurable: false });
})();

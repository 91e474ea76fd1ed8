// convo viewer: loads the next page of a long conversation as the reader
// scrolls to its end. Without it the "Later messages" link does the same.
"use strict";

function loadPages() {
  const box = document.getElementById("messages");
  if (!box || !("IntersectionObserver" in window)) {
    return;
  }
  let busy = false;
  const watch = () => {
    const more = box.querySelector("a.more[data-page]");
    if (!more) {
      return;
    }
    const seen = new IntersectionObserver(async (entries) => {
      if (busy || !entries.some((e) => e.isIntersecting)) {
        return;
      }
      busy = true;
      seen.disconnect();
      const label = more.textContent;
      more.textContent = "Loading…";
      try {
        const res = await fetch(more.dataset.page, { credentials: "same-origin", headers: { Accept: "text/html" } });
        if (!res.ok) {
          throw new Error("HTTP " + res.status);
        }
        // The server escaped every byte of the conversation; parsing
        // into a separate document runs nothing.
        const doc = new DOMParser().parseFromString(await res.text(), "text/html");
        const nodes = document.createDocumentFragment();
        for (const n of Array.from(doc.body.childNodes)) {
          nodes.appendChild(document.adoptNode(n));
        }
        more.replaceWith(nodes);
        busy = false;
        watch();
      } catch (err) {
        more.textContent = label;
        busy = false;
      }
    }, { rootMargin: "600px 0px" });
    seen.observe(more);
  };
  watch();
}

document.addEventListener("DOMContentLoaded", loadPages);

// Leadtrail web app: small enhancements. Every page works without this file.
"use strict";

document.documentElement.classList.add("js");

document.addEventListener("DOMContentLoaded", function () {
  // The site switcher submits itself on change; its button stays for keyboards.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () {
      if (select.form) {
        if (select.form.requestSubmit) {
          select.form.requestSubmit();
        } else {
          select.form.submit();
        }
      }
    });
  });

  // Long filter forms start folded on a phone, so the list comes first;
  // without script they stay open.
  if (window.matchMedia && window.matchMedia("(max-width: 640px)").matches) {
    document.querySelectorAll("details[data-fold-narrow]").forEach(function (details) {
      if (!details.querySelector("[aria-invalid=true]")) details.open = false;
    });
  }

  // A table wider than its panel scrolls inside it; keyboards reach it then.
  function scrollables() {
    document.querySelectorAll(".table-wrap").forEach(function (wrap) {
      if (wrap.scrollWidth > wrap.clientWidth + 1) {
        wrap.setAttribute("tabindex", "0");
      } else {
        wrap.removeAttribute("tabindex");
      }
    });
  }
  scrollables();
  window.addEventListener("resize", scrollables);

  // An avatar that cannot load (no Gravatar, or no network) is left out
  // rather than shown broken.
  document.querySelectorAll("img.avatar").forEach(function (img) {
    if (img.complete && img.naturalWidth === 0) img.hidden = true;
    img.addEventListener("error", function () { img.hidden = true; });
  });

  // Copy buttons copy the text of the element they name.
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy"));
      var status = document.querySelector(".copy-status");
      if (!source || !navigator.clipboard) {
        if (status) status.textContent = "Copying is not available here; select the text instead.";
        return;
      }
      navigator.clipboard.writeText(source.textContent.trim()).then(
        function () { if (status) status.textContent = "Copied " + source.textContent.trim() + "."; },
        function () { if (status) status.textContent = "Could not copy; select the text instead."; }
      );
    });
  });

  // Slug fields say, while typing, whether the slug is free on the site,
  // through the API's `checkSlug`. The edit form's own slug is free for it.
  document.querySelectorAll("input[data-slug-check]").forEach(function (input) {
    var status = document.getElementById(input.id.replace(/-slug$/, "-slug-status"));
    var own = input.getAttribute("data-current-slug");
    var timer = null;
    var asked = 0;
    function say(text) { if (status) status.textContent = text; }
    input.addEventListener("input", function () {
      // Every keystroke makes the answers still on their way stale.
      asked++;
      clearTimeout(timer);
      var slug = input.value.trim();
      if (!slug) { say(""); return; }
      if (slug === own) { say("This is the link's current slug."); return; }
      timer = setTimeout(function () {
        var mine = asked;
        fetch("/graphql", {
          method: "POST",
          credentials: "same-origin",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            query: "query Check($slug: String!, $site: Int) { checkSlug(slug: $slug, siteId: $site) { available } }",
            variables: { slug: slug, site: Number(input.getAttribute("data-site")) }
          })
        }).then(function (response) { return response.json(); }).then(function (answer) {
          if (mine !== asked) return;
          if (answer.errors && answer.errors.length) { say(answer.errors[0].message); return; }
          say(answer.data.checkSlug.available ? "“" + slug + "” is free." : "“" + slug + "” is taken on this site.");
        }).catch(function () { if (mine === asked) say(""); });
      }, 250);
    });
  });
});

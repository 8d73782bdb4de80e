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
});

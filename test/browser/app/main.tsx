import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { readPageConfig, SupportChatPage } from "./support-chat-page";

const root = document.getElementById("root");
if (!root) throw new Error("Invalid page: expected an element with id root, got none");
createRoot(root).render(
  <StrictMode>
    <SupportChatPage config={readPageConfig(window.location)} />
  </StrictMode>,
);

"use client";

import { useState, type ReactNode } from "react";
import { errorMessage } from "../_lib/errors";
import { channelStatusLabel } from "../_lib/format";

export function PageHeader({ title, description, actions }: { title: string; description?: ReactNode; actions?: ReactNode }) {
  return (
    <header className="page-header">
      <div>
        <h1>{title}</h1>
        {description && <p className="muted">{description}</p>}
      </div>
      {actions && <div className="page-actions">{actions}</div>}
    </header>
  );
}

/** A failed query or mutation, in the user's words. */
export function ErrorAlert({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="alert alert-error" role="alert">
      {errorMessage(error)}
    </p>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${status}`}>{channelStatusLabel[status] ?? status}</span>;
}

export function CopyButton({ text, label = "Copiar" }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
      setTimeout(() => setCopied(false), 2000);
    } catch {
      // Clipboard refused (plain http, permissions): the value stays selectable on the page.
    }
  }
  return (
    <button type="button" className="btn" onClick={copy}>
      {copied ? "Copiado!" : label}
    </button>
  );
}

export function Loading({ label = "Carregando…" }: { label?: string }) {
  return (
    <p className="muted" role="status">
      {label}
    </p>
  );
}

export function EmptyState({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}

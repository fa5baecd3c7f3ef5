"use client";

import Link from "next/link";
import { useId, useState, type FormEvent, type ReactNode } from "react";
import { errorMessage } from "../_lib/errors";
import { campaignStatusLabel, channelStatusLabel, pauseReasonLabel } from "../_lib/format";

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

/** A campaign's status; a paused one says why. */
export function CampaignStatusBadge({ status, pauseReason }: { status: string; pauseReason?: string | null }) {
  const reason = status === "paused" && pauseReason ? (pauseReasonLabel[pauseReason] ?? pauseReason) : undefined;
  return (
    <span className={`badge badge-${status}`}>
      {campaignStatusLabel[status] ?? status}
      {reason && <span className="badge-detail"> · {reason}</span>}
    </span>
  );
}

/** Groups processed out of the total: sent in one colour, failed in another; `pending` (a part of the total, e.g. one number's) in a lighter one. */
export function ProgressBar({
  total,
  sent,
  failed,
  pending,
  label = "Progresso do envio",
}: {
  total: number;
  sent: number;
  failed: number;
  pending?: number;
  label?: string;
}) {
  const pct = (n: number) => (total > 0 ? `${Math.min(100, (n / total) * 100)}%` : "0%");
  const done = sent + failed;
  return (
    <div
      className="progress"
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={total}
      aria-valuenow={done}
      aria-valuetext={`${done} de ${total} grupos processados: ${sent} enviados, ${failed} com falha${pending === undefined ? "" : `, ${pending} pendentes`}`}
    >
      <span className="progress-sent" style={{ width: pct(sent) }} />
      <span className="progress-failed" style={{ width: pct(failed) }} />
      {pending !== undefined && <span className="progress-pending" style={{ width: pct(pending) }} />}
    </div>
  );
}

/**
 * A labelled form control with an optional hint. The hint sits outside the <label> (tied with
 * aria-describedby), so the control's accessible name is the label alone.
 */
export function Field({
  label,
  hint,
  className,
  children,
}: {
  label: ReactNode;
  hint?: ReactNode;
  className?: string;
  children: (control: { id: string; "aria-describedby"?: string }) => ReactNode;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  return (
    <div className={className ? `field ${className}` : "field"}>
      <label htmlFor={id}>{label}</label>
      {children({ id, "aria-describedby": hint ? hintId : undefined })}
      {hint && (
        <small id={hintId} className="muted">
          {hint}
        </small>
      )}
    </div>
  );
}

/** One of a few options as cards (a radio each): the label in bold and a line of help under it. */
export function ChoiceList<V extends string>({
  name,
  options,
  value,
  onChange,
  label,
}: {
  name: string;
  options: { value: V; label: string; help: string }[];
  value: V;
  onChange: (value: V) => void;
  /** Names the group when no fieldset's legend does. */
  label?: string;
}) {
  return (
    <div className="choice-list" role="radiogroup" aria-label={label}>
      {options.map((o) => (
        <label key={o.value} className={value === o.value ? "choice selected" : "choice"}>
          <input type="radio" name={name} value={o.value} checked={value === o.value} onChange={() => onChange(o.value)} />
          <span>
            <strong>{o.label}</strong>
            <small className="muted">{o.help}</small>
          </span>
        </label>
      ))}
    </div>
  );
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

/** The trail above a detail page: the list it belongs to, then the item when it is known. */
export function Breadcrumb({ href, label, current }: { href: string; label: string; current?: string }) {
  return (
    <nav className="breadcrumb" aria-label="Trilha">
      <Link href={href}>{label}</Link>
      {current !== undefined && (
        <>
          {" / "}
          <span>{current}</span>
        </>
      )}
    </nav>
  );
}

/** A detail page that cannot show its item: "not found" (404/400, or absent from its list), or the error. */
export function DetailUnavailable({ href, label, notFound, error }: { href: string; label: string; notFound: string; error?: unknown }) {
  const status = (error as { data?: { httpStatus?: number } | null } | undefined)?.data?.httpStatus;
  const missing = !error || status === 404 || status === 400;
  return (
    <>
      <Breadcrumb href={href} label={label} />
      {missing ? <PageHeader title={notFound} /> : <ErrorAlert error={error} />}
    </>
  );
}

/** The "new …" card of a list page: one name field and a submit button; the form clears on success. */
export function CreateByNameForm({
  title,
  label,
  placeholder,
  maxLength,
  submitLabel,
  pending,
  error,
  onCreate,
}: {
  title: string;
  label: string;
  placeholder: string;
  maxLength: number;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onCreate: (name: string, done: () => void) => void;
}) {
  function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    onCreate(String(new FormData(form).get("name")).trim(), () => form.reset());
  }
  return (
    <section className="card">
      <h2>{title}</h2>
      <form className="row align-end" onSubmit={onSubmit}>
        <label className="field grow">
          <span>{label}</span>
          <input name="name" required maxLength={maxLength} placeholder={placeholder} />
        </label>
        <button className="btn btn-primary" type="submit" disabled={pending}>
          {pending ? "Criando…" : submitLabel}
        </button>
      </form>
      <ErrorAlert error={error} />
    </section>
  );
}

/**
 * A list query in its four states: loading, the error, the empty message, or a table with one header
 * cell per column (`null`: an unlabelled actions column) and the rows `children` renders.
 */
export function QueryTable<T>({
  query,
  empty,
  columns,
  label,
  children,
}: {
  query: { isPending: boolean; error: unknown; data?: T[] };
  empty: ReactNode;
  columns: (string | null)[];
  label?: string;
  children: (rows: T[]) => ReactNode;
}) {
  if (query.isPending) return <Loading />;
  if (query.error) return <ErrorAlert error={query.error} />;
  if (!query.data || query.data.length === 0) return <EmptyState>{empty}</EmptyState>;
  return (
    <table className="table" aria-label={label}>
      <thead>
        <tr>
          {columns.map((c, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a table's columns are fixed (and a header may be empty).
            <th scope="col" key={i}>
              {c ?? <span className="sr-only">Ações</span>}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{children(query.data)}</tbody>
    </table>
  );
}

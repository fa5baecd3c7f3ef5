import { TRPCClientError } from "@trpc/client";

/** Domain codes the server may send, said in Portuguese; anything else shows the server's own message. */
const messagesByCode: Record<string, string> = {
  email_taken: "Já existe uma conta com este e-mail.",
  session_required: "Sua sessão expirou. Entre novamente.",
  channel_limit_reached: "Limite de canais atingido.",
  service_unavailable: "O canal não está conectado: não foi possível consultar os grupos.",
  rate_limited: "Muitas requisições. Aguarde um instante e tente de novo.",
  sign_up_limited: "Muitas contas criadas a partir deste endereço. Tente novamente mais tarde.",
  wrong_password: "A senha atual está incorreta.",
  password_change_limited: "Muitas tentativas com a senha errada. Tente novamente mais tarde.",
  cross_site_refused: "Pedido recusado: envie-o pelo próprio painel.",
};

interface ErrorData {
  domainCode?: string;
  code?: string;
  httpStatus?: number;
}

/** A human-readable message for a failed query or mutation (shown as is to the user). */
export function errorMessage(error: unknown): string {
  if (error instanceof TRPCClientError) {
    const data = error.data as ErrorData | undefined;
    const translated = data?.domainCode ? messagesByCode[data.domainCode] : undefined;
    if (translated) {
      // The server's text carries the details (limits, ids); keep it beside the translation.
      return data?.domainCode === "channel_limit_reached" ? `${translated} (${error.message})` : translated;
    }
    if (!data) return "Não foi possível falar com o servidor. Verifique sua conexão.";
    return validationMessage(error.message) ?? error.message;
  }
  if (error instanceof Error) return error.message;
  return "Erro inesperado.";
}

/** Input validation errors arrive as a JSON list of zod issues: name each field. */
function validationMessage(message: string): string | undefined {
  if (!message.startsWith("[")) return undefined;
  try {
    const issues = JSON.parse(message) as { path?: (string | number)[]; message?: string }[];
    return issues.map((i) => (i.path?.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");
  } catch {
    return undefined;
  }
}

/** True when the server says the dashboard session is gone. */
export function isSessionError(error: unknown): boolean {
  return error instanceof TRPCClientError && (error.data as ErrorData | undefined)?.httpStatus === 401;
}

// OAuth's own error body, `{error, error_description}` (RFC 6749 §5.2), thrown like any ApiError.
import { ApiError } from '../../platform/http/errors.ts';

export class OAuthError extends ApiError {
  readonly code: string;
  constructor(status: number, code: string, description: string, headers: Record<string, string> = {}) {
    super(status, { error: code, error_description: description }, { 'cache-control': 'no-store', ...headers });
    this.code = code;
  }
}

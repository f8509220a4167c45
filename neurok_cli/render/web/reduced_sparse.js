// Sparse rows (CSR: { indptr, indices, data, rows, cols }) for the reduced model's steps: the
// model's own matrices, the basis rows that map handle coordinates Z to points, and their
// products.

// -- sparse rows ------------------------------------------------------------------------

export function csr(arrays, name) {
  const shape = arrays[`${name}_shape`];
  return { indptr: arrays[`${name}_indptr`], indices: arrays[`${name}_indices`],
           data: Float64Array.from(arrays[`${name}_data`]), rows: shape[0], cols: shape[1] };
}

/** CSR rows (n, 4H) of kron(w, [x - c, 1]) for padded weights (n, K) at points x (n, 3):
 * the map from Z to the points' displacements (handles.basis_rows). */
export function basisRows(index, weight, k, x, centres) {
  const n = x.length / 3;
  const indptr = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    let c = 0;
    for (let s = 0; s < k; s++) if (weight[i * k + s] !== 0) c++;
    indptr[i + 1] = indptr[i] + 4 * c;
  }
  const indices = new Int32Array(indptr[n]);
  const data = new Float64Array(indptr[n]);
  for (let i = 0; i < n; i++) {
    let p = indptr[i];
    for (let s = 0; s < k; s++) {
      const w = weight[i * k + s];
      if (w === 0) continue;
      const h = index[i * k + s];
      for (let c = 0; c < 3; c++) {
        indices[p] = 4 * h + c;
        data[p++] = w * (x[3 * i + c] - centres[3 * h + c]);
      }
      indices[p] = 4 * h + 3;
      data[p++] = w;
    }
  }
  return { indptr, indices, data, rows: n, cols: centres.length / 3 * 4 };
}

/** out (rows, m) = A @ X (cols, m). */
export function mul(A, X, m, out = new Float64Array(A.rows * m)) {
  const { indptr, indices, data } = A;
  if (m === 3) {
    for (let i = 0; i < A.rows; i++) {
      let s0 = 0, s1 = 0, s2 = 0;
      for (let p = indptr[i]; p < indptr[i + 1]; p++) {
        const a = data[p], j = 3 * indices[p];
        s0 += a * X[j];
        s1 += a * X[j + 1];
        s2 += a * X[j + 2];
      }
      out[3 * i] = s0;
      out[3 * i + 1] = s1;
      out[3 * i + 2] = s2;
    }
    return out;
  }
  for (let i = 0; i < A.rows; i++) {
    for (let c = 0; c < m; c++) {
      let s = 0;
      for (let p = indptr[i]; p < indptr[i + 1]; p++) s += data[p] * X[indices[p] * m + c];
      out[i * m + c] = s;
    }
  }
  return out;
}

/** out (cols, m) += A^T @ X (rows, m). */
export function mulT(A, X, m, out) {
  const { indptr, indices, data } = A;
  if (m === 3) {
    for (let i = 0; i < A.rows; i++) {
      const x0 = X[3 * i], x1 = X[3 * i + 1], x2 = X[3 * i + 2];
      for (let p = indptr[i]; p < indptr[i + 1]; p++) {
        const a = data[p], j = 3 * indices[p];
        out[j] += a * x0;
        out[j + 1] += a * x1;
        out[j + 2] += a * x2;
      }
    }
    return out;
  }
  for (let i = 0; i < A.rows; i++) {
    for (let p = indptr[i]; p < indptr[i + 1]; p++) {
      const a = data[p], j = indices[p] * m;
      for (let c = 0; c < m; c++) out[j + c] += a * X[i * m + c];
    }
  }
  return out;
}

/** The rows ``keep`` of A. */
export function take(A, keep) {
  const indptr = new Int32Array(keep.length + 1);
  for (let r = 0; r < keep.length; r++) {
    indptr[r + 1] = indptr[r] + A.indptr[keep[r] + 1] - A.indptr[keep[r]];
  }
  const indices = new Int32Array(indptr[keep.length]);
  const data = new Float64Array(indptr[keep.length]);
  for (let r = 0; r < keep.length; r++) {
    const a = A.indptr[keep[r]], b = A.indptr[keep[r] + 1];
    indices.set(A.indices.subarray(a, b), indptr[r]);
    data.set(A.data.subarray(a, b), indptr[r]);
  }
  return { indptr, indices, data, rows: keep.length, cols: A.cols };
}

/** Dense (n, n) rows^T diag(k) rows, added to ``out`` at stride ``stride`` and offset. */
export function gram(rows, k, out, n, stride = 1, offset = 0) {
  const N = n * stride;
  for (let i = 0; i < rows.rows; i++) {
    const ki = k[i];
    if (ki === 0) continue;
    for (let p = rows.indptr[i]; p < rows.indptr[i + 1]; p++) {
      const a = rows.indices[p] * stride + offset, va = ki * rows.data[p];
      for (let q = rows.indptr[i]; q < rows.indptr[i + 1]; q++) {
        out[a * N + rows.indices[q] * stride + offset] += va * rows.data[q];
      }
    }
  }
}

# The race server: one image for every replica.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY server ./server
COPY client ./client
RUN pip install --no-cache-dir .
USER nobody
EXPOSE 8765
CMD ["python", "-m", "server", "--host", "0.0.0.0", "--port", "8765"]
